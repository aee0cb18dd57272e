"""Runs one of the Eclipse Paho interoperability suites (client_test.py for MQTT 3.1.1,
client_test5.py for MQTT 5) from an operator's Paho checkout against a broker that wants
per-device logins, changing configuration only: the host and port, a username and password on
every CONNECT, client ids made into the device's own (`<username>-<id>`), and every topic put
below the device's topic root. The tests themselves run unchanged from the checkout.

Called by scripts/paho/run.ts; prints one `PAHO <test> <ok|FAIL|ERROR|skip>` line per test.
"""

import argparse
import importlib
import os
import re
import signal
import socket
import sys
import unittest

parser = argparse.ArgumentParser()
parser.add_argument("--interop", required=True, help="the checkout's interoperability directory")
parser.add_argument("--suite", required=True, choices=["client_test", "client_test5"])
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--username", required=True)
parser.add_argument("--password", required=True)
parser.add_argument("--topic-root", required=True, help="prefix every topic gets, e.g. devices/d_x/")
parser.add_argument("--refused-filter", default="test/nosubscribe",
                    help="a filter the broker refuses for this login (left unprefixed)")
parser.add_argument("--connack-wait", type=float, default=0.5,
                    help="seconds the suite's client waits on a socket (its own value: 0.5)")
parser.add_argument("--timeout", type=int, default=60, help="seconds a test may take")
parser.add_argument("tests", nargs="*", help="only these test names")
args = parser.parse_args()

# The suite's client sets a 0.5 s socket timeout, so a CONNACK later than that fails the test.
# On a loaded machine that measures the machine; --connack-wait lengthens it for both brokers.
_settimeout = socket.socket.settimeout
socket.socket.settimeout = lambda self, t: _settimeout(self, args.connack_wait if t == 0.5 else t)

sys.path.insert(0, args.interop)
os.chdir(args.interop)
suite = importlib.import_module(args.suite)
base = suite.mqtt_client.Client
root = args.topic_root


def device_client_id(clientid):
    # An empty id stays empty (the broker assigns one); any other becomes one of the device's.
    raw = clientid.decode("utf-8") if isinstance(clientid, bytes) else clientid
    if raw == "":
        return clientid
    suffix = re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:23]
    return (args.username + "-" + suffix).encode("utf-8")


def to_device(topic):
    # `$` topics and the refused filter stay outside the tree; shared subscriptions keep their
    # `$share/<group>/` head; everything else goes below the topic root.
    if not isinstance(topic, str) or topic == "" or topic == args.refused_filter:
        return topic
    shared = re.match(r"^(\$share/[^/]+/)(.*)$", topic)
    if shared:
        return shared.group(1) + to_device(shared.group(2))
    if topic.startswith("$") or topic.startswith(root):
        return topic
    return root + topic


def from_device(topic):
    return topic[len(root):] if isinstance(topic, str) and topic.startswith(root) else topic


class DeviceCallback:
    """Hands the test's callback topic names (and response topics) as the test sent them."""

    def __init__(self, inner):
        self._inner = inner

    def publishArrived(self, topicName, *rest, **kw):
        properties = kw.get("properties") or (rest[4] if len(rest) > 4 else None)
        if properties is not None and hasattr(properties, "ResponseTopic"):
            properties.ResponseTopic = from_device(properties.ResponseTopic)
        return self._inner.publishArrived(from_device(topicName), *rest, **kw)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class DeviceClient(base):
    def __init__(self, clientid):
        super().__init__(device_client_id(clientid))

    def registerCallback(self, callback):
        return super().registerCallback(DeviceCallback(callback))

    def connect(self, *a, **kw):
        kw.setdefault("username", args.username)
        kw.setdefault("password", args.password.encode("utf-8"))
        if kw.get("willTopic") is not None:
            kw["willTopic"] = to_device(kw["willTopic"])
        return super().connect(*a, **kw)

    def subscribe(self, topics, *a, **kw):
        return super().subscribe([to_device(t) for t in topics], *a, **kw)

    def unsubscribe(self, topics, *a, **kw):
        return super().unsubscribe([to_device(t) for t in topics], *a, **kw)

    def publish(self, topic, *a, **kw):
        properties = kw.get("properties") or (a[3] if len(a) > 3 else None)
        if properties is not None and hasattr(properties, "ResponseTopic"):
            properties.ResponseTopic = to_device(properties.ResponseTopic)
        return super().publish(to_device(topic), *a, **kw)


suite.mqtt_client.Client = DeviceClient
topics = ("TopicA", "TopicA/B", "Topic/C", "TopicA/C", "/TopicA")
wildtopics = ("TopicA/+", "+/C", "#", "/#", "/+", "+/+", "TopicA/#")


def set_data():
    suite.topics, suite.wildtopics = topics, wildtopics
    suite.nosubscribe_topics = (args.refused_filter,)
    suite.host, suite.port = args.host, args.port
    suite.topic_prefix = ""


set_data()
suite.setData = set_data


class TestTimeout(Exception):
    pass


def too_long(signum, frame):
    raise TestTimeout("no result in %d s" % args.timeout)


signal.signal(signal.SIGALRM, too_long)


class Lines(unittest.TextTestResult):
    # A test that waits forever on a packet that never comes is an error after --timeout
    # seconds, not the end of the run.
    def startTest(self, test):
        print("PAHO-START %s" % test._testMethodName, file=sys.stderr, flush=True)
        signal.alarm(args.timeout)
        super().startTest(test)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def _line(self, test, word):
        # A failing setUpClass comes as an _ErrorHolder: every test of the class is then an error.
        name = getattr(test, "_testMethodName", None) or "setUpClass"
        print("PAHO %s %s" % (name, word), flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, "FAIL")

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, "ERROR")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(test, "skip")


loader = unittest.TestLoader()
if args.tests:
    tests = unittest.TestSuite(loader.loadTestsFromName("Test." + t, suite) for t in args.tests)
else:
    tests = loader.loadTestsFromTestCase(suite.Test)
unittest.TextTestRunner(stream=sys.stderr, verbosity=1, resultclass=Lines).run(tests)
