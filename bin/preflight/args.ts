/**
 * The command line of `npm run preflight` and `npm run deploy`: the stage's settings as cdk takes
 * them (`-c key=value`, `--context key=value`), `--region` and `--profile`; deploy hands anything
 * else to `cdk deploy` as it is (`--require-approval never`, `--outputs-file outputs.json`).
 */

/** A parsed command line. */
export interface CommandLine {
  readonly region?: string;
  readonly profile?: string;
  /** The `-c` settings, by key (the last of a key wins, as with cdk). */
  readonly context: Record<string, string>;
  /** The arguments not read here, in order. */
  readonly rest: string[];
  readonly help: boolean;
}

/** A usage mistake on the command line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parses `argv` (without the program): `--flag value` and `--flag=value` alike. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const context: Record<string, string> = {};
  const rest: string[] = [];
  let region: string | undefined;
  let profile: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined || next.startsWith('-')) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '-c' || flag === '--context') {
      const pair = value();
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`${flag} takes key=value, not "${pair}"`);
      context[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (flag === '--region') region = value();
    else if (flag === '--profile') profile = value();
    else if (flag === '-h' || flag === '--help') help = true;
    else rest.push(arg);
  }
  return { ...(region ? { region } : {}), ...(profile ? { profile } : {}), context, rest, help };
}

/** The settings as `-c key=value` arguments again, for cdk. */
export const contextArgs = (context: Readonly<Record<string, string>>): string[] =>
  Object.entries(context).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
