import { type CliContext, CliError } from './context.js';

/** One API operation as the CLI needs it, read from the server's own OpenAPI document. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  summary: string;
  pathParams: string[];
  queryParams: Map<string, { required: boolean; type: string | undefined }>;
  /** Body fields and their JSON types; null when the operation takes no JSON body. */
  body: Map<string, { required: boolean; type: string | undefined }> | null;
  admin: boolean;
}

interface OpenApiParameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: { type?: string };
}
interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  parameters?: OpenApiParameter[];
  requestBody?: {
    content?: Record<
      string,
      { schema?: { properties?: Record<string, { type?: string }>; required?: string[] } }
    >;
  };
}

/**
 * Every operation of the Fjord at `ctx.url`, from its `/openapi.json`: the CLI reaches whatever
 * that server serves, including areas newer than the CLI itself.
 */
export async function loadOperations(ctx: CliContext): Promise<Map<string, Operation>> {
  let res: Response;
  try {
    res = await fetch(`${ctx.url}/openapi.json`);
  } catch (err) {
    throw new CliError(`cannot reach Fjord at ${ctx.url} (from ${ctx.source}): ${(err as Error).message}`);
  }
  if (!res.ok) throw new CliError(`${ctx.url}/openapi.json answered ${res.status}`);
  const doc = (await res.json()) as { paths: Record<string, Record<string, OpenApiOperation>> };
  const ops = new Map<string, Operation>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!op.operationId) continue;
      const params = op.parameters ?? [];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      ops.set(op.operationId, {
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? '',
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: new Map(
          params
            .filter((p) => p.in === 'query')
            .map((p) => [p.name, { required: p.required ?? false, type: p.schema?.type }]),
        ),
        body: op.requestBody
          ? new Map(
              Object.entries(schema?.properties ?? {}).map(([name, s]) => [
                name,
                { required: (schema?.required ?? []).includes(name), type: s.type },
              ]),
            )
          : null,
        admin: path.startsWith('/admin/'),
      });
    }
  }
  return ops;
}
