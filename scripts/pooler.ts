/**
 * On-host entry of a self-hosted pooler (installed as /opt/proxylab/pooler.js beside
 * runner.js). Thin: parse args, build clients, run lib/pooler-host/bootstrap.ts or
 * lib/pooler-host/agent.ts, map errors to exit codes.
 *
 *   node pooler.js bootstrap --config /etc/proxylab/pooler-<name>.json [--endpoint-url URL]
 *   node pooler.js agent --config /etc/proxylab/pooler-<name>.json
 *
 * bootstrap exits 0 only when every pooler process answers with the pinned version and a
 * SELECT 1 through the data port reached the server (user data turns the exit code into
 * cfn-signal). Exit codes: 0 ok, 1 infrastructure failure, 2 usage error.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { exitCodeFor, UsageError } from '../lib/core/errors';
import {
  bootstrapPooler,
  execCommand,
  parsePoolerHostConfig,
  systemdProcessManager,
} from '../lib/pooler-host/bootstrap';
import { systemdRollHost } from '../lib/pooler-host/roll';
import { controlKeyFile } from '../lib/poolers/control';
import { startPoolerAgent } from '../lib/pooler-host/agent';
import { psqlScalarQuery } from '../lib/exec/libpq';
import { systemClock } from '../lib/engine/ports';
import { poolerDriver } from '../lib/poolers/registry';

const USAGE = `usage: node pooler.js bootstrap --config FILE [--endpoint-url URL]
       node pooler.js agent --config FILE
Run by the pooler host's user data and systemd; see docs/pooler-runtime.md. Exit: 0 ok, 1 failed, 2 usage.
`;

function parseArgs(argv: readonly string[]): { command: string; config: string; endpointUrl: string | null } {
  const [command, ...rest] = argv;
  const problems: string[] = [];
  if (command !== 'bootstrap' && command !== 'agent') problems.push(`unknown command "${command ?? ''}"`);
  const values = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const raw = rest[i] as string;
    const eq = raw.indexOf('=');
    const name = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    if (name !== '--config' && name !== '--endpoint-url') {
      problems.push(`unknown argument "${raw}"`);
      continue;
    }
    const value = eq > 0 ? raw.slice(eq + 1) : rest[++i];
    if (value === undefined) problems.push(`${name}: missing value`);
    else values.set(name, value);
  }
  const config = values.get('--config') ?? '';
  if (config === '') problems.push('--config: required');
  if (problems.length > 0) throw new UsageError(`${problems.join('; ')}\n${USAGE}`);
  return { command: command as string, config, endpointUrl: values.get('--endpoint-url') ?? null };
}

/** The control key the bootstrap wrote (hex); null when the file is absent or not a key. */
function readControlKey(file: string): string | null {
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(key) ? key : null;
  } catch {
    return null;
  }
}

function userIds(user: string): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    const args = parseArgs(argv);
    let text: string;
    try {
      text = fs.readFileSync(args.config, 'utf8');
    } catch (err) {
      throw new UsageError(`${args.config}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const config = parsePoolerHostConfig(text, args.config);
    // the OS user the driver's release install creates
    const user = poolerDriver(config.product).host.systemUser;
    if (args.command === 'agent') {
      const driver = poolerDriver(config.product);
      const agent = await startPoolerAgent({
        config,
        log: (l) => process.stdout.write(`${l}\n`),
        // the control channel: the bootstrap's key file (absent on a host deployed before it: refused)
        control: {
          key: readControlKey(controlKeyFile(config.name)),
          version: config.version,
          host: systemdRollHost({
            name: config.name,
            driver,
            dataPort: driver.host.dataPort,
            run: execCommand,
          }),
        },
      });
      await new Promise<void>((resolve) => {
        const done = (): void => resolve();
        process.once('SIGTERM', done);
        process.once('SIGINT', done);
      });
      await agent.stop();
      return 0;
    }
    const secrets = new SecretsManagerClient({
      region: config.region,
      ...(args.endpointUrl ? { endpoint: args.endpointUrl } : {}),
    });
    await bootstrapPooler(config, {
      secrets,
      query: psqlScalarQuery(),
      owner: userIds(user),
      processes: systemdProcessManager(config, user),
      clock: systemClock,
      write: (line) => void process.stdout.write(line),
    });
    return 0;
  } catch (err) {
    // Error messages never carry secrets: bootstrap names fields and secret ids, never values.
    process.stderr.write(`pooler: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitCodeFor(err);
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
