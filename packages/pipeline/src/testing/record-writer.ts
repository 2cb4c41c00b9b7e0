// Child process of records.test.ts: puts `count` records into the store under ROOT, the time of
// problem i being (i + 1) ms when MODE is "up" and (count - i) ms when it is "down".
import { RecordStore } from '../cache/records.js';
import { testRecord } from './records.js';

const [root, mode, countText, offsetText] = process.argv.slice(2);
const count = Number(countText);
const offset = Number(offsetText ?? '0');
const store = new RecordStore(root!);
for (let i = 0; i < count; i++) {
  const t = mode === 'up' ? i + 1 : count - i;
  store.put(testRecord(offset + i, t, `${mode}${offset + i}`));
}
