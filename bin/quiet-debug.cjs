// The `debug` package as the bundle sees it (bin/bundle.js resolves `require('debug')` here).
//
// mqtt-packet calls its `debug` logger about ten times per MQTT packet. The real logger takes its
// arguments as a rest parameter, so each call allocates an array before it finds itself disabled:
// under a broker load that was 7 % of all the bytes Fjord allocated and 1.5 % of its CPU time
// (bench/README.md, bench:mqtt). When DEBUG is unset at start (the normal case) every logger is a
// function that does nothing; with DEBUG set, it is the real package, unchanged.
'use strict';

const real = require('debug/src/index.js');

function quiet(namespace) {
  const off = () => {};
  off.namespace = namespace;
  off.enabled = false;
  off.useColors = false;
  off.color = 0;
  off.diff = 0;
  off.log = () => {};
  off.destroy = () => false;
  off.extend = (sub, delimiter) => quiet(`${namespace}${delimiter === undefined ? ':' : delimiter}${sub}`);
  return off;
}

if (process.env.DEBUG) {
  module.exports = real;
} else {
  // The package's module-level API stays the real one (enable, disable, formatters, humanize…):
  // loggers made before an enable() stay quiet, so DEBUG is to be set when Fjord starts.
  module.exports = Object.assign(quiet, real, { default: quiet, debug: quiet });
}
