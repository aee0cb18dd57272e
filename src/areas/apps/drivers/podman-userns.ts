/**
 * The user namespace of an app's containers. Root inside is an unprivileged id range on the host,
 * one range per app (its id slot), so a process that escapes the container is nobody in
 * particular on the host, and two apps never share an owner of files or a process count.
 *
 * Why Fjord's own ranges rather than `--userns=auto`: auto picks a fresh range per container from
 * `/etc/subuid`, so instances of one app (and a restarted instance) would own its volumes under
 * different ids; a range per app keeps a volume's files its own across instances and restarts,
 * and needs nothing written into `/etc/subuid`.
 */

/** Ids of one app's range: enough for every id an image's files use (up to nobody, 65534). */
export const IDS_PER_APP = 65_536;
/**
 * The first host id of app ranges: above the ids Debian hands to users and to `/etc/subuid`
 * ranges (100000 upwards), and clear of podman's own `containers` suggestion (2147483647 on).
 */
export const APP_IDS_BASE = 0x9000_0000;
/** Slots that fit below the highest usable id (4294967294). */
export const MAX_ID_SLOTS = Math.floor((0xffff_fffe - APP_IDS_BASE) / IDS_PER_APP);

/** The first host id of the app's range. */
export function hostIdsOf(slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_ID_SLOTS)
    throw new Error(`id slot ${slot} is outside 0..${MAX_ID_SLOTS - 1}`);
  return APP_IDS_BASE + slot * IDS_PER_APP;
}

/** The podman flags that map the container's ids 0..65535 to the app's host range. */
export function usernsFlags(slot: number): string[] {
  const first = hostIdsOf(slot);
  return ['--uidmap', `0:${first}:${IDS_PER_APP}`, '--gidmap', `0:${first}:${IDS_PER_APP}`];
}
