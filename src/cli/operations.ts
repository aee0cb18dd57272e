import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type CliContext, CliError } from './context.js';
import { jsonType, objectFields, type Schema } from './schema.js';

/** One parameter or body field of an operation, as help and the flag parser need it. */
export interface Field {
  required: boolean;
  /** The JSON type a flag's text converts to. */
  type: string | undefined;
  schema: Schema;
}

/** One API operation as the CLI needs it, read from an OpenAPI document. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  pathParams: string[];
  pathSchemas: Map<string, Field>;
  queryParams: Map<string, Field>;
  /** Body fields; null when the operation takes no JSON body. */
  body: Map<string, Field> | null;
  /** The schema of the first 2xx JSON answer, and its content type. */
  response: { schema: Schema | undefined; contentType: string } | null;
  admin: boolean;
}

interface OpenApiParameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
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
  return operationsOf((await res.json()) as OpenApiDocument);
}

/**
 * The operations of the OpenAPI document shipped beside this `fjord` (openapi.json at the
 * package root), so `--help` works with no server running; null when it is not there.
 */
export function shippedOperations(): Map<string, Operation> | null {
  for (const file of shippedDocumentCandidates()) {
    if (!existsSync(file)) continue;
    try {
      return operationsOf(JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument);
    } catch {
      // an unreadable copy: try the next place
    }
  }
  return null;
}

/** bin/fjord.js (or dist/fjord.cjs, or src/main.ts) sits one folder below the package root. */
function shippedDocumentCandidates(): string[] {
  const out: string[] = [];
  const script = process.argv[1];
  if (script) {
    try {
      out.push(join(dirname(realpathSync(script)), '..', 'openapi.json'));
    } catch {
      // no such script (an embedding host): fall through to the working folder
    }
  }
  out.push(join(process.cwd(), 'openapi.json'));
  return out;
}

export function operationsOf(doc: OpenApiDocument): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!op.operationId) continue;
      const params = op.parameters ?? [];
      const field = (p: OpenApiParameter): [string, Field] => [
        p.name,
        {
          required: p.required ?? false,
          type: jsonType(p.schema),
          schema: { ...(p.schema ?? {}), ...(p.description ? { description: p.description } : {}) },
        },
      ];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      const { properties, required } = objectFields(schema);
      const ok = Object.entries(op.responses ?? {}).find(([code]) => code.startsWith('2'));
      const content = ok?.[1].content ?? {};
      const contentType = Object.keys(content)[0];
      ops.set(op.operationId, {
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? '',
        description: op.description ?? '',
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        pathSchemas: new Map(params.filter((p) => p.in === 'path').map(field)),
        queryParams: new Map(params.filter((p) => p.in === 'query').map(field)),
        body: op.requestBody
          ? new Map(
              Object.entries(properties).map(([name, s]) => [
                name,
                { required: required.includes(name), type: jsonType(s), schema: s },
              ]),
            )
          : null,
        response: contentType ? { schema: content[contentType]!.schema, contentType } : null,
        admin: path.startsWith('/admin/'),
      });
    }
  }
  return ops;
}
