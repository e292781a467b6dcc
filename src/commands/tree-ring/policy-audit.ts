// tree-ring policy audit (logic in ./policy.ts).
export { audit as run } from './policy.js';
