import { buildTestApp } from './test/lib/synth';
const t0 = Date.now();
const { app } = buildTestApp();
console.log('construct', Date.now() - t0);
const t1 = Date.now();
const asm = app.synth();
console.log('synth', Date.now() - t1);
import("node:fs").then((fs) => console.log(fs.readdirSync(asm.directory)));
