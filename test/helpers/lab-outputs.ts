/**
 * Stack outputs of a deployed Aurora lab as the CLI reads them (lib/operator/outputs.ts), for tests
 * that give them to the operator, doctor or collector without a stack. Names follow the lab name;
 * `over` replaces any field.
 */
import type { LabOutputs } from '../../lib/operator/outputs';

export function labOutputsWith(over: Partial<LabOutputs> = {}): LabOutputs {
  const name = over.labName ?? 'demo';
  return {
    labName: name,
    runnerInstanceIds: ['i-0aaaaaaaaaaaaaaaa'],
    resultsBucketName: `proxylab-${name}-results`,
    clusterIdentifier: `${name}-cluster`,
    clusterEndpoint: `${name}.cluster-x.eu-west-1.rds.amazonaws.com`,
    clusterReaderEndpoint: `${name}.cluster-ro-x.eu-west-1.rds.amazonaws.com`,
    databasePort: 5432,
    dbInstanceIds: [`${name}-writer`],
    dbInstanceResourceIds: ['db-ABC'],
    proxyEndpoints: {},
    proxyNames: {},
    dbSecretArn: `arn:aws:secretsmanager:eu-west-1:1:secret:${name}`,
    collectorFunctionName: `${name}-collector`,
    databaseEngine: 'aurora-postgresql',
    dbInstanceClass: 'db.r6g.large',
    poolerEndpoints: {},
    poolerAdminSecretArn: null,
    componentZones: { writer: 'eu-west-1a', 'runner-0': 'eu-west-1a' },
    ...over,
  };
}

/** The outputs of one RDS Proxy `proxy` of lab `labName` (its endpoint and its RDS name). */
export function proxyOutputs(
  labName: string,
  proxy: string,
): Pick<LabOutputs, 'proxyEndpoints' | 'proxyNames'> {
  return {
    proxyEndpoints: { [proxy]: `${labName}-${proxy}.proxy-x.eu-west-1.rds.amazonaws.com` },
    proxyNames: { [proxy]: `${labName}-${proxy}` },
  };
}
