import { runQueue } from '../helpers/queue.js';

await runQueue();
