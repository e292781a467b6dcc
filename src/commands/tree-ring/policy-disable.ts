// tree-ring policy disable (logic in ./policy.ts).
export { disable as run } from './policy.js';
