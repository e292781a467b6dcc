// tree-ring policy status (logic in ./policy.ts).
export { status as run } from './policy.js';
