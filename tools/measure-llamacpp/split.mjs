// The fixed set-aside split of every measured case: 30% of the cases are set aside before any rule
// is fitted, by a fixed hash of the case id: the first 4 bytes of SHA-256(id) as an unsigned number,
// modulo 100, below 30. Models are split the same way by name.
import crypto from 'node:crypto';

export const setAside = (id) => crypto.createHash('sha256').update(id).digest().readUInt32BE(0) % 100 < 30;
