// tree-ring policy rotate (logic in ./policy.ts).
export { rotate as run } from './policy.js';
