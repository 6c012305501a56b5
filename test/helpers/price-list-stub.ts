/**
 * A Price List stub for tests: a catalogue of products as the AWS Price List Query API answers them
 * (`GetProducts` PriceList strings: product.sku, product.attributes, terms.OnDemand price
 * dimensions), for every line lib/cost/pricelist/queries.ts asks, at `factor` × the committed
 * us-east-1 prices, and a `GetProducts` that filters (TERM_MATCH, ANY_OF) and pages it like the API.
 */
import type { GetProductsCommandInput, GetProductsCommandOutput } from '@aws-sdk/client-pricing';
import { PRICE_TABLES_COMMITTED } from '../../lib/cost/price-table';

export interface StubProduct {
  readonly attributes: Record<string, string>;
  readonly unit: string;
  /** As the Price List writes it: a decimal string. */
  readonly price: string;
  readonly currency?: string;
}

/** One PriceList string. */
export function priceListEntry(p: StubProduct, sku: string): string {
  return JSON.stringify({
    product: { productFamily: p.attributes.productFamily, sku, attributes: { ...p.attributes } },
    serviceCode: p.attributes.servicecode,
    terms: {
      OnDemand: {
        [`${sku}.JRTCKXETXF`]: {
          priceDimensions: {
            [`${sku}.JRTCKXETXF.6YS6EN2CT7`]: {
              unit: p.unit,
              beginRange: '0',
              endRange: 'Inf',
              description: `stub ${p.unit}`,
              pricePerUnit: { [p.currency ?? 'USD']: p.price },
            },
          },
        },
      },
    },
    version: '20261128000000',
    publicationDate: '2026-11-28T00:00:00Z',
  });
}

const d = (n: number): string => n.toFixed(10);

/** The catalogue of `region` at `factor` × the committed us-east-1 prices. */
export function stubCatalogue(region: string, factor = 1.1): StubProduct[] {
  const t = PRICE_TABLES_COMMITTED['us-east-1'];
  if (!t) throw new Error('no committed us-east-1 table');
  const p = (
    service: string,
    attributes: Record<string, string>,
    unit: string,
    usd: number,
  ): StubProduct => ({
    attributes: { servicecode: service, regionCode: region, ...attributes },
    unit,
    price: d(usd * factor),
  });
  const rds = (a: Record<string, string>, unit: string, usd: number) => p('AmazonRDS', a, unit, usd);
  const aurora = { databaseEngine: 'Aurora PostgreSQL' };
  const out: StubProduct[] = [];
  for (const [cls, x] of Object.entries(t.auroraInstances)) {
    const a = {
      productFamily: 'Database Instance',
      ...aurora,
      deploymentOption: 'Single-AZ',
      instanceType: cls,
      vcpu: String(x.vcpus),
      memory: `${x.memoryGiB} GiB`,
    };
    out.push(rds({ ...a, usagetype: `EU-InstanceUsage:${cls}` }, 'Hrs', x.usdPerHour));
    out.push(rds({ ...a, usagetype: `EU-InstanceUsageIOOptimized:${cls}` }, 'Hrs', x.usdPerHour * 1.3));
  }
  for (const [cls, x] of Object.entries(t.rdsPostgresInstances)) {
    const a = {
      productFamily: 'Database Instance',
      databaseEngine: 'PostgreSQL',
      instanceType: cls,
      vcpu: String(x.vcpus),
      memory: `${x.memoryGiB} GiB`,
    };
    out.push(
      rds({ ...a, deploymentOption: 'Single-AZ', usagetype: `EU-InstanceUsage:${cls}` }, 'Hrs', x.usdPerHour),
    );
    out.push(
      rds(
        { ...a, deploymentOption: 'Multi-AZ', usagetype: `EU-Multi-AZUsage:${cls}` },
        'Hrs',
        x.usdPerHourMultiAz,
      ),
    );
  }
  out.push(
    rds(
      { productFamily: 'ServerlessV2', ...aurora, usagetype: 'EU-Aurora:ServerlessV2Usage' },
      'ACU-Hr',
      t.auroraServerlessPerAcuHour.usd,
    ),
    rds(
      { productFamily: 'ServerlessV2', ...aurora, usagetype: 'EU-Aurora:ServerlessV2IOOptimizedUsage' },
      'ACU-Hr',
      t.auroraIoOptimized.serverlessPerAcuHour.usd,
    ),
    rds(
      { productFamily: 'Database Storage', ...aurora, usagetype: 'EU-Aurora:StorageUsage' },
      'GB-Mo',
      t.auroraStoragePerGbMonth.usd,
    ),
    rds(
      { productFamily: 'Database Storage', ...aurora, usagetype: 'EU-Aurora:IO-OptimizedStorageUsage' },
      'GB-Mo',
      t.auroraIoOptimized.storagePerGbMonth.usd,
    ),
    rds(
      { productFamily: 'System Operation', ...aurora, usagetype: 'EU-Aurora:StorageIOUsage' },
      'IOs',
      t.auroraIoPerMillionRequests.usd / 1e6,
    ),
    rds(
      { productFamily: 'CPU Credits', ...aurora, usagetype: 'EU-Aurora:CPUCredits:db.t4g' },
      'vCPU-Hours',
      t.auroraCpuCreditPerVcpuHour.usd,
    ),
    rds(
      { productFamily: 'CPU Credits', ...aurora, usagetype: 'EU-Aurora:IOOptimizedCPUCredits:db.t4g' },
      'vCPU-Hours',
      t.auroraIoOptimized.cpuCreditPerVcpuHour.usd,
    ),
    rds(
      { productFamily: 'CPU Credits', databaseEngine: 'PostgreSQL', usagetype: 'EU-CPUCredits:db.t4g' },
      'vCPU-Hours',
      t.rdsCpuCreditPerVcpuHour.usd,
    ),
    rds(
      {
        productFamily: 'Database Storage',
        databaseEngine: 'PostgreSQL',
        deploymentOption: 'Single-AZ',
        volumeType: 'General Purpose-GP3',
        usagetype: 'EU-RDS:GP3-Storage',
      },
      'GB-Mo',
      t.rdsGp3PerGbMonth.usd,
    ),
    rds({ productFamily: 'RDS Proxy', usagetype: 'EU-RDS:ProxyUsage' }, 'vCPU-Hr', t.rdsProxyPerVcpuHour.usd),
    rds(
      { productFamily: 'RDS Proxy', usagetype: 'EU-RDS:Proxy-ASv2-Usage' },
      'ACU-Hr',
      t.rdsProxyPerAcuHour.usd,
    ),
  );
  for (const [type, x] of Object.entries(t.ec2Instances))
    out.push(
      p(
        'AmazonEC2',
        {
          productFamily: 'Compute Instance',
          instanceType: type,
          operatingSystem: 'Linux',
          tenancy: 'Shared',
          preInstalledSw: 'NA',
          capacitystatus: 'Used',
          licenseModel: 'No License required',
          vcpu: String(x.vcpus),
          memory: `${x.memoryGiB} GiB`,
          usagetype: `EU-BoxUsage:${type}`,
        },
        'Hrs',
        x.usdPerHour,
      ),
    );
  out.push(
    p(
      'AmazonEC2',
      { productFamily: 'Storage', volumeApiName: 'gp3', usagetype: 'EU-EBS:VolumeUsage.gp3' },
      'GB-Mo',
      t.ebsGp3PerGbMonth.usd,
    ),
    p(
      'AmazonVPC',
      { productFamily: 'VpcEndpoint', usagetype: 'EU-VpcEndpoint-Hours' },
      'Hrs',
      t.interfaceEndpointPerAzHour.usd,
    ),
    p(
      'AmazonVPC',
      { productFamily: 'VpcEndpoint', usagetype: 'EU-VpcEndpoint-Bytes' },
      'GB',
      t.interfaceEndpointPerGb.usd,
    ),
    p(
      'AmazonEC2',
      { productFamily: 'NAT Gateway', usagetype: 'EU-NatGateway-Hours' },
      'Hrs',
      t.natGatewayPerHour.usd,
    ),
    p(
      'AmazonEC2',
      { productFamily: 'NAT Gateway', usagetype: 'EU-NatGateway-Bytes' },
      'GB',
      t.natGatewayPerGb.usd,
    ),
    p(
      'AmazonVPC',
      { productFamily: 'VPC Public IPv4 Address', usagetype: 'EU-PublicIPv4:InUseAddress' },
      'Hrs',
      t.publicIpv4PerHour.usd,
    ),
    p(
      'AmazonVPC',
      { productFamily: 'VPC Public IPv4 Address', usagetype: 'EU-PublicIPv4:IdleAddress' },
      'Hrs',
      t.publicIpv4PerHour.usd,
    ),
    p(
      'AWSSecretsManager',
      { productFamily: 'Secret', usagetype: 'EU-AWSSecretsManager-Secrets' },
      'Secrets',
      t.secretPerMonth.usd,
    ),
    p('AWSELB', { productFamily: 'Load Balancer-Network', usagetype: 'EU-LoadBalancerUsage' }, 'Hrs', 0.0225),
    p('AWSELB', { productFamily: 'Load Balancer-Network', usagetype: 'EU-LCUUsage' }, 'LCU-Hrs', 0.006),
  );
  return out;
}

/** `GetProducts` over `catalogue`: filters as the API applies them, `pageSize` products a page. */
export function stubGetProducts(
  catalogue: readonly StubProduct[],
  pageSize = 40,
  entry: (p: StubProduct, sku: string) => string = priceListEntry,
): (
  input: GetProductsCommandInput,
) => Pick<GetProductsCommandOutput, 'PriceList' | 'NextToken' | '$metadata'> {
  return (input) => {
    const hits = catalogue.filter(
      (p) =>
        p.attributes.servicecode === input.ServiceCode &&
        (input.Filters ?? []).every((f) => {
          const v = p.attributes[f.Field ?? ''];
          return f.Type === 'ANY_OF' ? (f.Value ?? '').split(',').includes(v ?? '') : v === f.Value;
        }),
    );
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const page = hits.slice(start, start + pageSize);
    const next = start + pageSize < hits.length ? String(start + pageSize) : undefined;
    return {
      $metadata: {},
      PriceList: page.map((p, i) => entry(p, `SKU${start + i}`)),
      ...(next !== undefined ? { NextToken: next } : {}),
    };
  };
}
