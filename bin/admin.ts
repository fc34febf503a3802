/**
 * `npm run admin -- …`: creates workspaces, members and API tokens, against
 * the local stack (default: `.local/stack.json`) or a deployed table (`--table`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isScope } from '#lambdas/contract/permissions';
import { SlugSchema } from '#lambdas/contract/schemas';
import { createTableContext, ensureWorkspace, getWorkspace, issueToken, seedMember, type TableContext } from '#lambdas/composition/tools';

const HELP = `Usage: npm run admin -- <command> [options]

Commands:
  workspace create <slug> [--name <name>]          create a workspace
  member add <slug> <email> [--role owner|admin|member]
  token create <slug> [--name <name>] [--scopes admin]
                                                   mint an API token (printed once)
  publish <slug> <event-type> '<json payload>'     publish a domain event: to the local stack,
                                                   or with --bus <name> to a deployed stack's bus

Target (default: the local stack of .local/stack.json):
  --table <name> [--region <region>]               a deployed table (AWS credentials from the environment)
  --endpoint <url> --table <name>                  any DynamoDB endpoint (e.g. DynamoDB Local)
  --data-dir <path>                                local stack folder (default .local)`;

function target(values: { table?: string; region?: string; endpoint?: string; 'data-dir'?: string }): TableContext {
  if (values.table) {
    return createTableContext({
      tableName: values.table,
      ...(values.endpoint ? { endpoint: values.endpoint } : {}),
      ...(values.region ? { region: values.region } : {}),
    });
  }
  const file = `${values['data-dir'] ?? '.local'}/stack.json`;
  if (!existsSync(file))
    throw new Error(`No ${file}: start the local stack with \`npm start\`, or pass --table <name> for a deployed table.`);
  const stack = JSON.parse(readFileSync(file, 'utf8')) as { dynamoDbEndpoint: string; tableName: string };
  return createTableContext({ tableName: stack.tableName, endpoint: stack.dynamoDbEndpoint });
}

/** `n` and its noun, singular for exactly one (`1 delivery`, `2 deliveries`, `0 deliveries`). */
function counted(n: number, singular: string, plural: string): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

function slugOf(raw: string | undefined): string {
  const parsed = SlugSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`"${raw ?? ''}" is not a workspace slug (lower-case letters, digits, dashes)`);
  return parsed.data;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      role: { type: 'string', default: 'member' },
      scopes: { type: 'string', default: 'admin' },
      table: { type: 'string' },
      region: { type: 'string' },
      endpoint: { type: 'string' },
      'data-dir': { type: 'string' },
      bus: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const [noun, verb, ...args] = positionals;
  if (values.help || !noun) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  if (noun === 'publish') return publish(positionals.slice(1), values);
  const table = target(values);
  try {
    if (noun === 'workspace' && verb === 'create') {
      const slug = slugOf(args[0]);
      const created = await ensureWorkspace(table, slug, values.name ?? slug);
      console.log(created ? `Created workspace ${slug}.` : `Workspace ${slug} already exists.`);
      return created ? 0 : 1;
    }
    const slug = slugOf(args[0]);
    if (!(await getWorkspace(table, slug))) throw new Error(`No workspace ${slug}; create it with \`workspace create ${slug}\`.`);
    if (noun === 'member' && verb === 'add') {
      const email = args[1];
      const role = values.role as 'owner' | 'admin' | 'member';
      if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new Error('member add needs an email address');
      if (!['owner', 'admin', 'member'].includes(role)) throw new Error('--role is owner, admin or member');
      const member = await seedMember(table, slug, email, role);
      console.log(`Added ${email} (${role}) to ${slug} as ${member.memberId}.`);
      return 0;
    }
    if (noun === 'token' && verb === 'create') {
      const scopes = (values.scopes ?? 'admin')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = scopes.filter((s) => !isScope(s));
      if (scopes.length === 0) throw new Error('No scope given: --scopes takes one or more, comma-separated (e.g. read,webhook:write)');
      if (bad.length) throw new Error(`Unknown ${bad.length === 1 ? 'scope' : 'scopes'}: ${bad.join(', ')}`);
      const { token, tokenId } = await issueToken(table, slug, { name: values.name ?? 'admin cli', scopes });
      console.log(`Token ${tokenId} for ${slug} (scopes: ${scopes.join(', ')}). Shown once, store it now:\n${token}`);
      return 0;
    }
    console.error(`Unknown command: ${positionals.join(' ')}\n\n${HELP}`);
    return 2;
  } finally {
    table.doc.destroy();
  }
}

/** `publish`: EventBridge PutEvents on a deployed bus, or the local stack's stand-in for it. */
async function publish(args: string[], values: { bus?: string; region?: string; 'data-dir'?: string }): Promise<number> {
  const [slug, type, json] = args;
  if (!slug || !type) throw new Error("publish needs <slug> <event-type> ['<json payload>']");
  let payload: unknown;
  try {
    payload = JSON.parse(json ?? '{}');
  } catch {
    throw new Error('The payload is not valid JSON');
  }
  if (values.bus) {
    const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
    const { eventBridgeSink } = await import('#lambdas/composition/tools');
    await eventBridgeSink(new EventBridgeClient(values.region ? { region: values.region } : {}), values.bus).emit(slug, type, payload);
    console.log(`Put ${type} for ${slug} on bus ${values.bus}.`);
    return 0;
  }
  const file = `${values['data-dir'] ?? '.local'}/stack.json`;
  if (!existsSync(file))
    throw new Error(`No ${file}: start the local stack with \`npm start\`, or pass --bus <name> for a deployed stack.`);
  const { apiUrl } = JSON.parse(readFileSync(file, 'utf8')) as { apiUrl: string };
  const res = await fetch(`${apiUrl}/local/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: slug, type, payload }),
  });
  const body = (await res.json()) as { deliveryIds?: string[]; detail?: string };
  if (!res.ok) throw new Error(body.detail ?? `HTTP ${res.status}`);
  console.log(
    `Published ${type} to ${slug}: ${counted(body.deliveryIds?.length ?? 0, 'delivery', 'deliveries')} queued${body.deliveryIds?.length ? ` (${body.deliveryIds.join(', ')})` : ''}.`,
  );
  return 0;
}

main()
  .then((code) => process.exit(code))
  .catch((e: unknown) => {
    console.error(`admin: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
