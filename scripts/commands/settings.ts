/**
 * `proxylab settings [product] [--version V] [--json]`: a product's settings catalogue
 * (lib/products/<product>/settings.ts) at one of the releases the kit pins — what a lab may put in
 * `settings` on its poolers and proxies, with types, ranges, defaults by version and sources
 * (lib/cli/settings-catalogue.ts). Without a product: the products that have one. No AWS call.
 * docs/settings.md is the same catalogue, generated (scripts/gen-docs.ts).
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { PRODUCT_ENTRIES } from '../../lib/products';

/** The products with a settings catalogue, by id (`rds-proxy, pgbouncer, pgdoorman`), from the registry. */
const WITH_SETTINGS = Object.values(PRODUCT_ENTRIES)
  .filter((e) => e.settings !== null)
  .map((e) => e.id);
const SELF_HOSTED = WITH_SETTINGS.filter((id) => PRODUCT_ENTRIES[id].versioned);
import type * as SettingsCatalogueModule from '../../lib/cli/settings-catalogue';
import type * as RegistryModule from '../../lib/poolers/registry';

const catalogueModule = (): typeof SettingsCatalogueModule =>
  require('../../lib/cli/settings-catalogue') as typeof SettingsCatalogueModule;
const registryModule = (): typeof RegistryModule =>
  require('../../lib/poolers/registry') as typeof RegistryModule;

interface SettingsFlags {
  readonly version?: string;
  readonly json?: boolean;
}

export function register(program: Command): void {
  program
    .command('settings')
    .description(
      "List a product's settings a lab may set in `settings` on its proxies (rds-proxy) and poolers " +
        `(${SELF_HOSTED.join(', ')}): name, type and unit, range or values, the default at the version, the ` +
        'release it appeared in, what it bears on (pool, failure, timeouts, session, network, auth), what ' +
        'it does and its source. Settings proxylab sets from a lab field name that field; refused ones say ' +
        'why. Without a product: the products with settings. No AWS call.\n\n' +
        'Exit codes: 0 ok, 2 an unknown product or a version the kit does not pin.',
    )
    .argument('[product]', WITH_SETTINGS.join(', '))
    .option('--version <v>', 'a release the kit pins (default: the one a lab gets when it names none)')
    .option('--json', 'print the catalogue (or the product list) as JSON')
    .action((product: string | undefined, flags: SettingsFlags) => {
      const cat = catalogueModule();
      const drivers = registryModule().POOLER_DRIVERS;
      const pinned = (p: string) => cat.pinnedVersions(drivers, p);
      if (product === undefined) {
        if (flags.version !== undefined)
          throw new UsageError(`settings: --version needs a product (${WITH_SETTINGS.join(', ')})`);
        const list = cat.cataloguedProducts().map((p) => ({
          product: p.id,
          label: p.label,
          settings: p.catalogue.settings.length,
          versions: pinned(p.id)?.versions ?? [],
        }));
        process.stdout.write(
          flags.json ? `${JSON.stringify(list, null, 2)}\n` : `${cat.formatProductList(pinned)}\n`,
        );
        return;
      }
      const at = cat.catalogueAt(product, flags.version, pinned);
      process.stdout.write(flags.json ? `${JSON.stringify(at, null, 2)}\n` : `${cat.formatCatalogue(at)}\n`);
    });
}
