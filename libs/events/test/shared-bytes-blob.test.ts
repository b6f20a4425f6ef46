import { SharedBytesBlob } from '../database';

/** The PGlite template's Blob (libs/events/database.ts): the file's bytes, not copied, read as any Blob's. */
describe('SharedBytesBlob', () => {
  const text = 'template 👩‍👩‍👧 東京 שלום '.repeat(1000);
  const bytes = Buffer.from(text, 'utf8');
  const plain = new Blob([bytes]);

  it('hands out the same bytes on every arrayBuffer(), not a copy', async () => {
    const blob = new SharedBytesBlob(Buffer.from(bytes));
    const first = await blob.arrayBuffer();
    expect(await blob.arrayBuffer()).toBe(first);
    expect(Buffer.from(first).equals(bytes)).toBe(true);
  });

  it('reads as a Blob of those bytes: size, slice, text and stream', async () => {
    const blob = new SharedBytesBlob(Buffer.from(bytes));
    expect(blob.size).toBe(plain.size);
    expect(Buffer.from(await blob.slice(7, 5_000).arrayBuffer()).equals(Buffer.from(await plain.slice(7, 5_000).arrayBuffer()))).toBe(true);
    expect(await blob.text()).toBe(text);
    const chunks: Uint8Array[] = [];
    for await (const chunk of blob.stream()) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('copies a Buffer that is a view of a larger one (only the view is its bytes)', async () => {
    const larger = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]);
    const blob = new SharedBytesBlob(larger.subarray(2, 2 + bytes.length));
    expect(blob.size).toBe(bytes.length);
    expect(Buffer.from(await blob.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
