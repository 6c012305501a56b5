/**
 * The AWS call audit log (PROXYLAB_AWS_CALL_LOG, lib/core/aws-call-log.ts): one JSON line per call
 * with the service, the operation and the identifiers of what it names — never a body, a secret
 * value or a command's script; nothing at all without the variable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { AWS_CALL_LOG_ENV, withAwsCallLog } from '../../lib/core/aws-call-log';
import { scratchDir } from '../helpers/scratch';

/** Answers every call of `client` in-process (no network), after the log's middleware ran. */
function answerLocally<C extends { middlewareStack: { add: (...a: never[]) => void } }>(client: C): C {
  (client.middlewareStack.add as (m: unknown, o: unknown) => void)(
    () => () => Promise.resolve({ output: { $metadata: {} }, response: {} }),
    { step: 'initialize', priority: 'low', name: 'answerLocally' },
  );
  return client;
}

const creds = { region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };

test('each call is one line: service, operation, identifiers; no body, secret or script', async () => {
  // GIVEN clients from the factory's wrapper with the variable set
  const file = join(scratchDir('proxylab-call-log-'), 'calls.jsonl');
  const env = { [AWS_CALL_LOG_ENV]: file };
  const s3 = answerLocally(withAwsCallLog(new S3Client(creds), env));
  const sm = answerLocally(withAwsCallLog(new SecretsManagerClient(creds), env));
  const ssm = answerLocally(withAwsCallLog(new SSMClient(creds), env));
  // WHEN they make calls that carry a body, a secret and a script
  await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'runs/r1/request.json', Body: 'BODY-TEXT' }));
  await sm.send(
    new PutSecretValueCommand({
      SecretId: 'arn:aws:secretsmanager:x:1:secret:db',
      SecretString: 'PASSWORD-1',
    }),
  );
  await ssm.send(
    new SendCommandCommand({
      DocumentName: 'AWS-RunShellScript',
      InstanceIds: ['i-0aaa'],
      Parameters: { commands: ['echo SCRIPT-TEXT'] },
    }),
  );
  // THEN the log names what each call touched, and nothing else
  const text = readFileSync(file, 'utf8');
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { service: string; operation: string; input: unknown; time: string });
  expect(lines.map(({ service, operation, input }) => ({ service, operation, input }))).toEqual([
    { service: 'S3', operation: 'PutObject', input: { Bucket: 'b', Key: 'runs/r1/request.json' } },
    {
      service: 'Secrets Manager',
      operation: 'PutSecretValue',
      input: { SecretId: 'arn:aws:secretsmanager:x:1:secret:db' },
    },
    {
      service: 'SSM',
      operation: 'SendCommand',
      input: { DocumentName: 'AWS-RunShellScript', InstanceIds: ['i-0aaa'] },
    },
  ]);
  expect(text).not.toMatch(/BODY-TEXT|PASSWORD-1|SCRIPT-TEXT/);
  expect(lines.every((l) => !Number.isNaN(Date.parse(l.time)))).toBe(true);
});

test('without PROXYLAB_AWS_CALL_LOG the client has no log middleware', () => {
  const plain = withAwsCallLog(new S3Client(creds), {});
  const logged = withAwsCallLog(new S3Client(creds), { [AWS_CALL_LOG_ENV]: '/dev/null' });
  expect(plain.middlewareStack.identify().some((m) => m.startsWith('proxylabAwsCallLog'))).toBe(false);
  expect(logged.middlewareStack.identify().some((m) => m.startsWith('proxylabAwsCallLog'))).toBe(true);
});
