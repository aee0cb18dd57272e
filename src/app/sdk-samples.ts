/**
 * The SDK example shown for each operation in the API reference (`x-codeSamples`, which Scalar
 * and Redoc display beside their own curl examples): the call as `@fjord/sdk` spells it.
 */
export function sdkSample(
  method: string,
  path: string,
  op: { parameters?: { in: string; name: string }[]; requestBody?: unknown },
  access: 'customer' | 'operator' | 'public',
): { lang: string; label: string; source: string } {
  const credential =
    access === 'customer'
      ? ', apiKey: process.env.FJORD_API_KEY'
      : access === 'operator'
        ? ', operatorToken: process.env.FJORD_OPERATOR_TOKEN'
        : '';
  const params = op.parameters ?? [];
  const group = (where: string) => {
    const names = params.filter((p) => p.in === where).map((p) => `${identifier(p.name)}: '…'`);
    return names.length ? `${where}: { ${names.join(', ')} }` : null;
  };
  // One `params` object with both groups when an operation has path and query parameters.
  const paramText = [group('path'), group('query')].filter(Boolean).join(', ');
  const options = [paramText ? `params: { ${paramText} }` : null, op.requestBody ? 'body: { /* … */ }' : null]
    .filter(Boolean)
    .join(', ');
  const call = `fjord.${method.toUpperCase()}('${path}'${options ? `, { ${options} }` : ''})`;
  return {
    lang: 'typescript',
    label: 'Fjord SDK',
    source: [
      "import { createFjordClient } from '@fjord/sdk';",
      '',
      `const fjord = createFjordClient({ baseUrl: 'http://127.0.0.1:8080'${credential} });`,
      `const { data, error } = await ${call};`,
    ].join('\n'),
  };
}

const identifier = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`);
