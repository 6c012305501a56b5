/**
 * The pooler agent's control channel, as both ends see it (pure: schemas, the key and the token; the
 * server is lib/pooler-host/control.ts, the runner's client lib/aws/pooler-agent-client.ts):
 *
 *   agent  → {"hello":"proxylab-pooler-control","version":1,"nonce":"<32 hex>"}
 *   runner → {"op":"roll","index":i,"token":"<64 hex>"}          one line, at most CONTROL_MAX_LINE bytes
 *   agent  → {"event":"started-new","index":i,"pid":p,"at":iso,"detail":…}   zero or more
 *   agent  → {"result":"ok"|"failed"|"refused",…,"at":iso}                   last line, then close
 *
 * Who may ask: the port is open only to the runners' security group (lib/constructs/pooler-host.ts),
 * AND the request carries `token` = HMAC-SHA256(key, "roll:<index>:<nonce>") where `key` is
 * `controlKey(admin password, pooler name)`: the runner reads the admin password from Secrets
 * Manager (as it does for the admin consoles); the bootstrap writes only the derived key on the host
 * (0600, the pooler's system user: `controlKeyFile`). Neither the password nor the key crosses the
 * network, and a token is good for one nonce (one connection) only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const CONTROL_PROTOCOL = 'proxylab-pooler-control';
/** A request line longer than this is refused (the channel reads no more). */
export const CONTROL_MAX_LINE = 1024;

/** The key both ends derive from the pooler admin secret's password (hex). */
export function controlKey(adminPassword: string, poolerName: string): string {
  return createHmac('sha256', adminPassword).update(`${CONTROL_PROTOCOL}:${poolerName}`).digest('hex');
}

/** The request's token for one nonce (one connection). */
export function controlToken(key: string, nonce: string, op: string, index: number): string {
  return createHmac('sha256', key).update(`${op}:${index}:${nonce}`).digest('hex');
}

/** `token` is the one `key` gives for this nonce, op and index (compared in constant time). */
export function tokenMatches(key: string, nonce: string, op: string, index: number, token: string): boolean {
  const want = Buffer.from(controlToken(key, nonce, op, index), 'hex');
  const got = Buffer.from(token, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Where the bootstrap writes the key on a host: beside the host config, `root` `/` on a host. */
export function controlKeyFile(name: string, root = '/'): string {
  return `${root.replace(/\/+$/, '')}/etc/proxylab/pooler-${name}.control-key`;
}

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not a time' });

export const helloSchema = z.object({
  hello: z.literal(CONTROL_PROTOCOL),
  version: z.literal(1),
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
});

export const requestSchema = z
  .object({
    op: z.literal('roll'),
    index: z.number().int().min(0),
    token: z.string().regex(/^[0-9a-f]{64}$/, { message: '64 lowercase hex digits' }),
  })
  .strict();
export type ControlRequest = z.output<typeof requestSchema>;

/** What happened to process `index`, in the order it happened, each with the agent's time. */
export const ROLL_EVENTS = [
  /** A process of the other generation still running from an earlier roll, stopped at once first. */
  'stopped-leftover',
  'started-new',
  'signalled-old',
  'old-exited',
  /** Still draining (its clients connected) when the agent stopped waiting: it leaves with them. */
  'old-still-draining',
] as const;

export const rollEventSchema = z.object({
  event: z.enum(ROLL_EVENTS),
  index: z.number().int().min(0),
  pid: z.number().int().positive(),
  signal: z.string().max(16).optional(),
  at: iso,
  detail: z.string().max(500),
});
export type RollEvent = z.output<typeof rollEventSchema>;

export const resultSchema = z.discriminatedUnion('result', [
  z.object({
    result: z.literal('ok'),
    index: z.number().int().min(0),
    oldPid: z.number().int().positive(),
    newPid: z.number().int().positive(),
    oldExited: z.boolean(),
    at: iso,
  }),
  z.object({ result: z.enum(['failed', 'refused']), error: z.string().max(1000), at: iso }),
]);
export type ControlResult = z.output<typeof resultSchema>;

/** One line the agent sends after the hello: an event or the result. */
export const answerSchema = z.union([rollEventSchema, resultSchema]);
