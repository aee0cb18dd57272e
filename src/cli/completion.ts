/** Bash completion of the command words (`complete -F`), from the same tables the CLI runs on. */
export function completionScript(commands: string[][]): string {
  const words = new Map<string, Set<string>>();
  const add = (prefix: string, next: string) => {
    if (!words.has(prefix)) words.set(prefix, new Set());
    words.get(prefix)!.add(next);
  };
  for (const c of commands) for (let i = 0; i < c.length; i++) add(c.slice(0, i).join(' '), c[i]!);
  for (const w of [
    'login',
    'logout',
    'op',
    'completion',
    'start',
    'migrate',
    'admin',
    'openapi',
    'emulator',
    'gpu-worker',
  ])
    add('', w);
  add('op', 'list');
  const cases = [...words]
    .map(([prefix, next]) => `    "${prefix}") words="${[...next].sort().join(' ')}" ;;`)
    .join('\n');
  return `# bash completion for fjord: source <(fjord completion)
_fjord() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prefix="\${COMP_WORDS[*]:1:COMP_CWORD-1}" words=""
  case "$prefix" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _fjord fjord
`;
}
