/**
 * The reasoning efforts the real OpenAI API accepts per model, kept apart from the adapters' model
 * table so that a wrong table is caught by a 400 here. Unknown models (OpenAI-compatible relays,
 * local models) are not checked.
 */
const EFFORTS: readonly { match: RegExp; accepts: readonly string[] | 'unchecked' }[] = [
  { match: /^(gpt-5(\.\d+)?-codex|codex-)/, accepts: ['low', 'medium', 'high'] },
  { match: /^gpt-5-pro/, accepts: ['high'] },
  { match: /^gpt-5\.\d+-pro/, accepts: ['medium', 'high', 'xhigh'] },
  { match: /^gpt-5(\.\d+)?-chat/, accepts: 'unchecked' },
  { match: /^gpt-5\.1(?!\d)/, accepts: ['none', 'low', 'medium', 'high'] },
  { match: /^gpt-5\.\d/, accepts: ['none', 'low', 'medium', 'high', 'xhigh'] },
  { match: /^gpt-5/, accepts: ['minimal', 'low', 'medium', 'high'] },
  { match: /^o\d/, accepts: ['low', 'medium', 'high'] },
  // models with no reasoning: the parameter itself is rejected
  { match: /^(gpt-4|gpt-3\.5|chatgpt-)/, accepts: [] },
];

const list = (values: readonly string[]) =>
  values.length === 1
    ? `'${values[0]}'`
    : `${values
        .slice(0, -1)
        .map((v) => `'${v}'`)
        .join(', ')}, and '${values[values.length - 1]}'`;

/** The 400 the real API gives for this effort on this model (param: the field's wire path); null: accepted. */
export function rejectEffort(model: string, effort: unknown, param: string): { message: string; param: string; code: string } | null {
  if (effort === undefined) return null;
  const row = EFFORTS.find((r) => r.match.test(model));
  if (!row || row.accepts === 'unchecked') return null;
  if (row.accepts.length === 0) {
    return { message: `Unsupported parameter: '${param}' is not supported with this model.`, param, code: 'unsupported_parameter' };
  }
  if (typeof effort === 'string' && row.accepts.includes(effort)) return null;
  return {
    message: `Unsupported value: '${String(effort)}' is not supported with the '${model}' model. Supported values are: ${list(row.accepts)}.`,
    param,
    code: 'unsupported_value',
  };
}
