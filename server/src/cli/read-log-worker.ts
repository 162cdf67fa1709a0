// A worker thread of runs/read-logs.ts: reads one log and posts it back. Its own small bundle
// (dist/read-log-worker.cjs), the log readers alone: a worker that loaded the whole `compare`
// bundle spent a tenth of a fresh compare compiling code it never ran, on the path the
// comparison waits on.
import { isLogReadWorker, serveLogRead } from '../runs/read-logs.js';

if (!isLogReadWorker()) throw new Error('read-log-worker runs as a worker thread of readLogFiles');
serveLogRead();
