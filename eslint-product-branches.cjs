/**
 * The product-name rule (eslint.config.mjs applies it to lib/, scripts/, lambda/ and bin/ outside
 * lib/products/; test/integration/product-branch-rule.test.ts shows it failing).
 */
// No code outside a product's entry (lib/products/) branches on a product's or a kind's name: it asks
// the entry (capabilities, settings, disruptions). `x.pooler === 'pgbouncer'`, `kind !== 'direct'`,
// `targetProduct(d).id === 'rds-proxy'`, `case 'pgdoorman':` on such a value are errors elsewhere.
const PRODUCT_NAMES =
  '/^(postgres|rds-proxy|pgbouncer|pgdoorman|direct|pgbouncer-transaction|pgbouncer-session|pgdoorman-transaction|pgdoorman-session)$/';
const PRODUCT_FIELD = '/^(pooler|product|kind|id)$/';
const PRODUCT_BRANCH_MESSAGE =
  "product-name branch: ask the product's entry (lib/products: capabilities, settings, disruptions) instead of comparing its name";
const PRODUCT_BRANCHES = [
  {
    selector: `BinaryExpression[operator=/^[!=]==?$/][left.property.name=${PRODUCT_FIELD}][right.value=${PRODUCT_NAMES}]`,
    message: PRODUCT_BRANCH_MESSAGE,
  },
  {
    selector: `BinaryExpression[operator=/^[!=]==?$/][right.property.name=${PRODUCT_FIELD}][left.value=${PRODUCT_NAMES}]`,
    message: PRODUCT_BRANCH_MESSAGE,
  },
  {
    selector: `BinaryExpression[operator=/^[!=]==?$/][left.property.name='pooler'][right.value='none']`,
    message: PRODUCT_BRANCH_MESSAGE,
  },
  {
    selector: `SwitchStatement[discriminant.property.name=${PRODUCT_FIELD}] > SwitchCase[test.value=${PRODUCT_NAMES}]`,
    message: PRODUCT_BRANCH_MESSAGE,
  },
];

module.exports = { PRODUCT_BRANCHES, PRODUCT_BRANCH_MESSAGE };
