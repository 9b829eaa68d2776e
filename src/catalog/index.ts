export {
  CAPABILITIES,
  type Capability,
  type CapabilityId,
  type Endpoint,
  endpointOf,
} from './capabilities.ts';
export { buildCatalog, type CatalogSource } from './catalog.ts';
export { dollarsToNanos } from './prices.ts';
export type {
  ApiFamily,
  Catalog,
  CatalogFilter,
  CatalogModel,
  CatalogPrices,
  Modality,
  Quirks,
} from './types.ts';
export { MODALITIES } from './types.ts';
