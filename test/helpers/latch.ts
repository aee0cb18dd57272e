/**
 * A promise a test opens by hand: a job or a login held at one point until the test lets it go on,
 * or a point the code under test reaches and the test waits for. (Promise.withResolvers is Node 22.)
 */
export function latch(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
