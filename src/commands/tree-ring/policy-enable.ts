// tree-ring policy enable (logic in ./policy.ts).
export { enable as run } from './policy.js';
