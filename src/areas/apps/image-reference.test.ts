import { describe, expect, it } from 'vitest';
import { ImagePolicy, podmanReference } from './image-policy.js';
import { imageReferenceProblem, parseImageReference, registryCovers } from './image-reference.js';

describe('image references', () => {
  it('writes short names out as Docker Hub’s, so podman never picks a registry itself', () => {
    expect(podmanReference('nginx')).toBe('docker.io/library/nginx:latest');
    expect(podmanReference('team/web:2')).toBe('docker.io/team/web:2');
    expect(podmanReference('ghcr.io/team/web:1.4')).toBe('ghcr.io/team/web:1.4');
    expect(podmanReference(`quay.io/a/b@sha256:${'f'.repeat(64)}`)).toBe(
      `quay.io/a/b@sha256:${'f'.repeat(64)}`,
    );
    expect(parseImageReference('localhost:5000/x')).toMatchObject({
      registry: 'localhost:5000',
      host: 'localhost',
    });
    expect(parseImageReference('[fd00::1]:443/x:1')).toMatchObject({
      registry: '[fd00::1]:443',
      host: 'fd00::1',
    });
  });

  it('refuses what is not a reference, saying why', () => {
    expect(imageReferenceProblem('-it')).toContain('option');
    expect(imageReferenceProblem('a b')).toContain('white space');
    for (const bad of ['up/X', 'x/', 'x:', 'x@sha256:1', 'h:70000/x', `${'a'.repeat(300)}`, 'a/../b'])
      expect(imageReferenceProblem(bad), bad).not.toBeNull();
  });

  it('matches the operator’s registry entries by registry and path prefix', () => {
    const ref = parseImageReference('ghcr.io/acme/web:1')!;
    expect(registryCovers('ghcr.io', ref)).toBe(true);
    expect(registryCovers('ghcr.io/acme', ref)).toBe(true);
    expect(registryCovers('ghcr.io/acm', ref)).toBe(false);
    expect(registryCovers('ghcr.io:443', ref)).toBe(false);
    expect(registryCovers('docker.io', parseImageReference('nginx')!)).toBe(true);
  });

  it('lets the operator allow a private registry, and only a listed one', () => {
    const open = new ImagePolicy({ registries: ['10.0.0.5:5000'], allowPrivate: true });
    expect(open.choose('10.0.0.5:5000/team/web:1')).toMatchObject({ registry: { host: '10.0.0.5' } });
    expect(() => open.choose('10.0.0.6:5000/team/web:1')).toThrow(/not one of them/);
    const closed = new ImagePolicy({ registries: ['10.0.0.5:5000'], allowPrivate: false });
    expect(() => closed.choose('10.0.0.5:5000/team/web:1')).toThrow(/private address/);
    const none = new ImagePolicy({ registries: [], allowPrivate: false });
    expect(() => none.choose('nginx')).toThrow(/uploaded images only/);
    expect(none.choose('localhost/fjord-upload/abc')).toEqual({ upload: 'abc' });
  });
});
