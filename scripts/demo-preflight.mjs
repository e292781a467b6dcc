// `npm run demo`'s first step, before the build: is there what the demo needs (a container engine, or
// podman to start one, and a static busybox for its local image)? Plain Node, no build, no packages,
// so a newcomer without an engine learns it at once, with what to install (exit 12, as the demo's own
// check: RUNTIME_UNAVAILABLE).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as http from 'node:http';

const INSTALL = 'install what the demo needs: sudo apt-get install -y podman runc busybox-static (Debian; or run Docker, or set DOCKER_HOST)';

function pings(url) {
  let target;
  if (url.startsWith('unix://')) target = { socketPath: url.slice('unix://'.length) };
  else if (url.startsWith('tcp://')) {
    const u = new URL(`http://${url.slice('tcp://'.length)}`);
    target = { host: u.hostname, port: u.port };
  } else return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = http.request({ ...target, path: '/_ping', timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function fail(why) {
  process.stderr.write(`agentscm demo: ${why}; ${INSTALL}\n`);
  process.exit(12);
}

if (!['/bin/busybox', '/usr/bin/busybox'].some((p) => existsSync(p))) fail('no static busybox on this host to build the local test image from');
const named = process.env.DOCKER_HOST;
if (named) {
  // A named engine is the operator's choice: the demo never substitutes another one.
  if (!(await pings(named))) fail(`the container engine at ${named} (DOCKER_HOST) did not answer`);
} else {
  const sockets = ['/var/run/docker.sock', '/run/podman/podman.sock'];
  if (process.env.XDG_RUNTIME_DIR) sockets.push(`${process.env.XDG_RUNTIME_DIR}/podman/podman.sock`);
  let found = false;
  for (const s of sockets) if (!found && existsSync(s)) found = await pings(`unix://${s}`);
  if (!found && spawnSync('podman', ['--version'], { stdio: 'ignore' }).status !== 0) fail('no container engine answers and podman is not installed to start one');
}
