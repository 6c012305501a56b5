/**
 * What the kit asks the Price List for each billable line of a `PriceTable`: the service code, the
 * filters and, where one filter set matches several products, which of them is the line (by its
 * `usagetype`). Attribute names and values as the Price List writes them (`GetProducts` filters are
 * product attributes: AWS Billing User Guide, "Using the AWS Price List Query API";
 * https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_Filter.html):
 * `regionCode` on every product, AmazonRDS `databaseEngine` ("Aurora PostgreSQL", "PostgreSQL"),
 * `deploymentOption` ("Single-AZ", "Multi-AZ"), `instanceType`, `productFamily` ("Database Instance",
 * "Database Storage", "System Operation", "ServerlessV2", "CPU Credits", "RDS Proxy"), `volumeType`;
 * AmazonEC2 `operatingSystem`, `tenancy`, `preInstalledSw`, `capacitystatus`, `licenseModel`,
 * `volumeApiName`; `vcpu` and `memory` ("4 GiB") on instance products.
 *
 * Not read from an AWS document here, and so checked by the unit the answer carries (a wrong match
 * is refused, never priced): the `usagetype` fragments that tell RDS Proxy on Serverless v2
 * (`ASv2`/`Serverless`) from RDS Proxy on instances, Aurora I/O-Optimized (`IOOptimized`) from
 * Aurora Standard, and the VPC endpoint, NAT gateway, public IPv4 and NLB usage types below.
 */
import type { PriceQuery } from './client';
import type { PricedProduct } from './parse';

/** One unit-priced line: the query, which product is the line, the unit it must be in, a scale to the table's unit. */
export interface UnitLine {
  readonly query: PriceQuery;
  readonly pick: (p: PricedProduct) => boolean;
  readonly unit: RegExp;
  /** The table's unit per the Price List's (I/O: per request → per million requests). @default 1 */
  readonly scale?: number;
}

const usage = (p: PricedProduct): string => p.attributes.usagetype ?? '';
const ioOptimized = (p: PricedProduct): boolean => /IOOptimized|IO-Optimized/i.test(usage(p));
const any = (): boolean => true;

/** The unit-priced lines of a region's table, by the table's field path. */
export function unitLines(region: string): Readonly<Record<string, UnitLine>> {
  const rds = (f: Record<string, string>): PriceQuery => ({
    serviceCode: 'AmazonRDS',
    filters: { regionCode: region, ...f },
  });
  const aurora = { databaseEngine: 'Aurora PostgreSQL' };
  return {
    auroraServerlessPerAcuHour: {
      query: rds({ productFamily: 'ServerlessV2', ...aurora }),
      pick: (p) => !ioOptimized(p),
      unit: /ACU/i,
    },
    'auroraIoOptimized.serverlessPerAcuHour': {
      query: rds({ productFamily: 'ServerlessV2', ...aurora }),
      pick: ioOptimized,
      unit: /ACU/i,
    },
    auroraStoragePerGbMonth: {
      query: rds({ productFamily: 'Database Storage', ...aurora }),
      pick: (p) => !ioOptimized(p),
      unit: /^GB-Mo/i,
    },
    'auroraIoOptimized.storagePerGbMonth': {
      query: rds({ productFamily: 'Database Storage', ...aurora }),
      pick: ioOptimized,
      unit: /^GB-Mo/i,
    },
    auroraIoPerMillionRequests: {
      query: rds({ productFamily: 'System Operation', ...aurora }),
      pick: any,
      unit: /^IOs?$/i,
      scale: 1e6,
    },
    auroraCpuCreditPerVcpuHour: {
      query: rds({ productFamily: 'CPU Credits', ...aurora }),
      pick: (p) => !ioOptimized(p),
      unit: /vCPU/i,
    },
    'auroraIoOptimized.cpuCreditPerVcpuHour': {
      query: rds({ productFamily: 'CPU Credits', ...aurora }),
      pick: ioOptimized,
      unit: /vCPU/i,
    },
    rdsGp3PerGbMonth: {
      query: rds({
        productFamily: 'Database Storage',
        databaseEngine: 'PostgreSQL',
        deploymentOption: 'Single-AZ',
        volumeType: 'General Purpose-GP3',
      }),
      pick: any,
      unit: /^GB-Mo/i,
    },
    rdsCpuCreditPerVcpuHour: {
      query: rds({ productFamily: 'CPU Credits', databaseEngine: 'PostgreSQL' }),
      pick: any,
      unit: /vCPU/i,
    },
    rdsProxyPerVcpuHour: {
      query: rds({ productFamily: 'RDS Proxy' }),
      pick: (p) => !/ASv2|Serverless/i.test(usage(p)),
      unit: /vCPU/i,
    },
    rdsProxyPerAcuHour: {
      query: rds({ productFamily: 'RDS Proxy' }),
      pick: (p) => /ASv2|Serverless/i.test(usage(p)),
      unit: /ACU/i,
    },
    ebsGp3PerGbMonth: {
      query: {
        serviceCode: 'AmazonEC2',
        filters: { regionCode: region, productFamily: 'Storage', volumeApiName: 'gp3' },
      },
      pick: any,
      unit: /^GB-Mo/i,
    },
    interfaceEndpointPerAzHour: {
      query: { serviceCode: 'AmazonVPC', filters: { regionCode: region, productFamily: 'VpcEndpoint' } },
      pick: (p) => /VpcEndpoint-Hours$/i.test(usage(p)),
      unit: /^Hrs?$/i,
    },
    interfaceEndpointPerGb: {
      query: { serviceCode: 'AmazonVPC', filters: { regionCode: region, productFamily: 'VpcEndpoint' } },
      pick: (p) => /VpcEndpoint-Bytes$/i.test(usage(p)),
      unit: /^GB$/i,
    },
    natGatewayPerHour: {
      query: { serviceCode: 'AmazonEC2', filters: { regionCode: region, productFamily: 'NAT Gateway' } },
      pick: (p) => /NatGateway-Hours$/i.test(usage(p)),
      unit: /^Hrs?$/i,
    },
    natGatewayPerGb: {
      query: { serviceCode: 'AmazonEC2', filters: { regionCode: region, productFamily: 'NAT Gateway' } },
      pick: (p) => /NatGateway-Bytes$/i.test(usage(p)),
      unit: /^GB$/i,
    },
    publicIpv4PerHour: {
      query: {
        serviceCode: 'AmazonVPC',
        filters: { regionCode: region, productFamily: 'VPC Public IPv4 Address' },
      },
      pick: (p) => /PublicIPv4:InUseAddress$/i.test(usage(p)),
      unit: /^Hrs?$/i,
    },
    secretPerMonth: {
      query: { serviceCode: 'AWSSecretsManager', filters: { regionCode: region, productFamily: 'Secret' } },
      pick: any,
      unit: /Secret|Mo/i,
    },
    nlbPerHour: {
      query: {
        serviceCode: 'AWSELB',
        filters: { regionCode: region, productFamily: 'Load Balancer-Network' },
      },
      pick: (p) => /LoadBalancerUsage$/i.test(usage(p)),
      unit: /^Hrs?$/i,
    },
  };
}

/** The instance queries: every class or type the kit knows, in one ANY_OF query per family. */
export function instanceQueries(
  region: string,
  known: {
    readonly aurora: readonly string[];
    readonly rdsPostgres: readonly string[];
    readonly ec2: readonly string[];
  },
): { readonly aurora: PriceQuery; readonly rdsPostgres: PriceQuery; readonly ec2: PriceQuery } {
  return {
    aurora: {
      serviceCode: 'AmazonRDS',
      filters: {
        regionCode: region,
        productFamily: 'Database Instance',
        databaseEngine: 'Aurora PostgreSQL',
        deploymentOption: 'Single-AZ',
        instanceType: known.aurora,
      },
    },
    rdsPostgres: {
      serviceCode: 'AmazonRDS',
      filters: {
        regionCode: region,
        productFamily: 'Database Instance',
        databaseEngine: 'PostgreSQL',
        deploymentOption: ['Single-AZ', 'Multi-AZ'],
        instanceType: known.rdsPostgres,
      },
    },
    ec2: {
      serviceCode: 'AmazonEC2',
      filters: {
        regionCode: region,
        productFamily: 'Compute Instance',
        operatingSystem: 'Linux',
        tenancy: 'Shared',
        preInstalledSw: 'NA',
        capacitystatus: 'Used',
        licenseModel: 'No License required',
        instanceType: known.ec2,
      },
    },
  };
}

/** Whether the product is Aurora I/O-Optimized (its instances, storage, ACUs and credits). */
export { ioOptimized as isIoOptimized };
