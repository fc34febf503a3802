/**
 * `npm run admin -- …`: the workspace lifecycle through the platform API (docs/api.md#platform-api),
 * signed like any platform backend's request: against the local stack (`.local/stack.json`'s
 * `platformCredentials`) or a deployed stack (`--api`, the environment's AWS credentials). With
 * `--table` it writes a table directly instead, for what the API has no route for (members) and
 * for a stage whose `platformPrincipals` does not name the caller.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isScope } from '#lambdas/contract/permissions';
import { SlugSchema } from '#lambdas/contract/schemas';
import { platformFetch, type PlatformSigning } from './platform-client';
import { createTableContext, ensureWorkspace, getWorkspace, issueToken, seedMember, type TableContext } from '#lambdas/composition/tools';

const HELP = `Usage: npm run admin -- <command> [options]

Commands (through the platform API, signed with SigV4):
  workspace create <slug> --owner <email> [--name <name>]
                                                   create a workspace and its owner member
  workspace delete <slug> [--wait]                 erase a workspace and everything it holds (a job)
  token create <slug> [--name <name>] [--scopes admin]
                                                   mint an API token (printed once)
  portal-link <slug> [--read-only] [--expires-in <seconds>]
                                                   mint a single-use link that opens the console
  publish <slug> <event-type> '<json payload>'     publish a domain event: to the local stack,
                                                   or with --bus <name> to a deployed stack's bus
Commands on the table itself (--table; the platform API adds only the owner member):
  member add <slug> <email> [--role owner|admin|member]
  workspace create <slug> [--name <name>]          (no owner member)
  token create <slug> [--name <name>] [--scopes admin]

Target (default: the local stack of .local/stack.json and its platformCredentials):
  --api <url> [--region <region>]                  a deployed stack's PlatformApiUrl (or ApiUrl), signed with
                                                   the environment's AWS credentials (default provider chain);
                                                   the caller must be in the stage's platformPrincipals
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
      api: { type: 'string' },
      owner: { type: 'string' },
      wait: { type: 'boolean', default: false },
      'read-only': { type: 'boolean', default: false },
      'expires-in': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const [noun, verb, ...args] = positionals;
  if (values.help || !noun) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  if (noun === 'publish') return publish(positionals.slice(1), values);
  if (!values.table && !values.endpoint) return platformCommand(noun, verb, args, values);
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
      const scopes = scopesOf(values.scopes);
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

/** Scopes from `--scopes`, checked. */
function scopesOf(raw: string | undefined): string[] {
  const scopes = (raw ?? 'admin')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !isScope(s));
  if (scopes.length === 0) throw new Error('No scope given: --scopes takes one or more, comma-separated (e.g. read,webhook:write)');
  if (bad.length) throw new Error(`Unknown ${bad.length === 1 ? 'scope' : 'scopes'}: ${bad.join(', ')}`);
  return scopes;
}

/** Where platform API calls go and how they are signed: `--api` with the environment's credentials, else the local stack's. */
async function platformTarget(values: {
  api?: string;
  region?: string;
  'data-dir'?: string;
}): Promise<{ base: string; signing: PlatformSigning }> {
  if (values.api) {
    const url = new URL(values.api);
    const region = values.region ?? /\.execute-api\.([a-z0-9-]+)\./.exec(url.hostname)?.[1] ?? process.env.AWS_REGION;
    if (!region) throw new Error('No region: pass --region, or an execute-api URL that names it');
    // Any SDK client's credentials are the default provider chain's (environment, profile, SSO, role).
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const credentials = new DynamoDBClient({ region }).config.credentials;
    // The PlatformApiUrl output ends in /platform/; the ApiUrl output is the stage's base.
    const base = url.href.replace(/\/$/, '').replace(/\/platform$/, '');
    return { base, signing: { credentials, region } };
  }
  const file = `${values['data-dir'] ?? '.local'}/stack.json`;
  if (!existsSync(file))
    throw new Error(`No ${file}: start the local stack with \`npm start\`, or pass --api <url> for a deployed stack (or --table <name>).`);
  const stack = JSON.parse(readFileSync(file, 'utf8')) as {
    apiUrl: string;
    platformCredentials?: PlatformSigning['credentials'] & { region: string };
  };
  if (!stack.platformCredentials) throw new Error(`${file} has no platformCredentials: restart the local stack with \`npm start\``);
  return { base: stack.apiUrl, signing: { credentials: stack.platformCredentials, region: stack.platformCredentials.region } };
}

/** The commands the platform API serves. */
async function platformCommand(
  noun: string,
  verb: string | undefined,
  args: string[],
  values: {
    api?: string;
    region?: string;
    'data-dir'?: string;
    name?: string;
    owner?: string;
    scopes?: string;
    wait?: boolean;
    'read-only'?: boolean;
    'expires-in'?: string;
  },
): Promise<number> {
  const slug = slugOf(noun === 'portal-link' ? verb : args[0]);
  const { base, signing } = await platformTarget(values);
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const res = await platformFetch({ method, url: `${base}${path}`, ...(body === undefined ? {} : { body }) }, signing);
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (res.status >= 400) {
      const problem = (parsed ?? {}) as { detail?: string; title?: string };
      throw new Error(`${problem.detail ?? problem.title ?? `HTTP ${res.status}`} (${res.status})`);
    }
    return { status: res.status, body: parsed };
  };
  if (noun === 'workspace' && verb === 'create') {
    if (!values.owner || !/^[^@\s]+@[^@\s]+$/.test(values.owner))
      throw new Error('workspace create needs --owner <email>: its owner member');
    await call('POST', '/platform/workspaces', { slug, name: values.name ?? slug, owner: { email: values.owner } });
    console.log(`Created workspace ${slug}, owned by ${values.owner}.`);
    return 0;
  }
  if (noun === 'workspace' && verb === 'delete') {
    let job = (await call('DELETE', `/platform/workspaces/${slug}`)).body as {
      jobId: string;
      status: string;
      erased: Record<string, number>;
    };
    console.log(`Erasing workspace ${slug}: job ${job.jobId}.`);
    while (values.wait && job.status === 'running') {
      await new Promise((r) => setTimeout(r, 1000));
      job = (await call('GET', `/platform/jobs/${job.jobId}`)).body as typeof job;
    }
    if (values.wait) {
      const total = Object.values(job.erased).reduce((a, b) => a + b, 0);
      console.log(`Job ${job.jobId} ${job.status}: ${counted(total, 'item', 'items')} erased.`);
      return job.status === 'completed' ? 0 : 1;
    }
    return 0;
  }
  if (noun === 'token' && verb === 'create') {
    const scopes = scopesOf(values.scopes);
    const { token, tokenId } = (await call('POST', `/platform/workspaces/${slug}/api-tokens`, { name: values.name ?? 'admin cli', scopes }))
      .body as { token: string; tokenId: string };
    console.log(`Token ${tokenId} for ${slug} (scopes: ${scopes.join(', ')}). Shown once, store it now:\n${token}`);
    return 0;
  }
  if (noun === 'portal-link') {
    const expiresIn = values['expires-in'] === undefined ? undefined : Number(values['expires-in']);
    const { url, expiresAt } = (
      await call('POST', `/platform/workspaces/${slug}/portal-sessions`, {
        ...(values['read-only'] ? { readOnly: true } : {}),
        ...(expiresIn === undefined ? {} : { expiresIn }),
      })
    ).body as { url: string; expiresAt: string };
    console.log(`Portal link for ${slug} (opens once within 10 minutes; the session ends ${expiresAt}):\n${url}`);
    return 0;
  }
  if (noun === 'member') throw new Error('member add writes the table: pass --table <name> (the platform API adds only the owner member)');
  console.error(`Unknown command: ${[noun, verb, ...args].filter(Boolean).join(' ')}\n\n${HELP}`);
  return 2;
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
