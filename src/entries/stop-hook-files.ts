// The Stop hook's body (its code cache is named by cacheFileOf, src/cli/code-cache.ts): install-stop
// registers the small loader dist/bundles/agentscm-stop-hook.cjs, which runs the bundled body with a
// code cache.

export const BODY_NAME = 'agentscm-stop-hook.body.cjs';
