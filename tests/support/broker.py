"""A real MQTT broker for the tests marked ``mqtt`` and for benchmarks/mqtt.py: Debian's mosquitto on a
free loopback port with a configuration file of its own (anonymous clients, no persistence unless
asked, every packet logged so a test can see what the broker sent and received), stopped and started
again on the same port to play a broker restart; a :class:`Relay` whose connections a test cuts plays a
network fault. :func:`require` skips a test when mosquitto or paho-mqtt is absent, or fails it under
``RSP_REQUIRE_MQTT=1`` (``make test``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

SEARCHED = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")


def mosquitto_path() -> str | None:
    """The mosquitto program (Debian puts it in /usr/sbin, which a user's PATH may lack)."""
    found = shutil.which("mosquitto")
    if found:
        return found
    return next((path for path in SEARCHED if os.access(path, os.X_OK)), None)


def missing() -> str | None:
    """Why the MQTT tests cannot run here, or None."""
    if mosquitto_path() is None:
        return "no mosquitto broker: make mosquitto installs it (apt-get install mosquitto)"
    try:
        import paho.mqtt.client  # noqa: F401
    except ImportError:
        return "no paho-mqtt: pip install -e '.[mqtt]' (make installs it)"
    return None


def require() -> None:
    """Skip the calling test (or fail it under ``RSP_REQUIRE_MQTT=1``) when MQTT cannot run."""
    import pytest

    reason = missing()
    if reason is None:
        return
    if os.environ.get("RSP_REQUIRE_MQTT"):
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Broker:
    """mosquitto on ``127.0.0.1:port``, its configuration and log in ``folder``."""

    def __init__(self, folder: Path, persistence: bool = False, packets: bool = True) -> None:
        """``persistence``: sessions and queued messages kept across a restart (saved when :meth:`stop`
        ends the broker with SIGTERM), in ``folder``; ``packets``: every packet logged (what
        :meth:`logged` counts; a benchmark turns it off, as a broker in service does: at 10,000 messages/s
        the log alone takes a good part of a core)."""
        self.folder = Path(folder)
        self.port = free_port()
        self.log = self.folder / "mosquitto.log"
        self.config = self.folder / "mosquitto.conf"
        kept = f"persistence true\npersistence_location {self.folder}/\nuser root\n" if persistence else ""
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            f"{kept or 'persistence false' + chr(10)}"
            "log_dest stderr\n"
            f"log_type {'all' if packets else 'warning'}\n"
            "max_queued_messages 1000000\n",
            encoding="utf-8",
        )
        self.process: subprocess.Popen | None = None

    def url(self, topic: str) -> str:
        return f"mqtt://127.0.0.1:{self.port}/{topic}"

    def start(self) -> Broker:
        # the log (unbuffered on stderr) through our own handle: run as root, mosquitto writes files as
        # the user mosquitto
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [mosquitto_path(), "-c", str(self.config)], stdout=subprocess.DEVNULL, stderr=log
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"mosquitto ended: {self.log.read_text(errors='replace')}") from None
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on 127.0.0.1:{self.port}")

    def stop(self, graceful: bool = False) -> None:
        """Kill the broker (SIGKILL: a crash), or with ``graceful`` end it with SIGTERM (it saves its
        persistence)."""
        if self.process is not None and self.process.poll() is None:
            if graceful:
                self.process.terminate()
            else:
                self.process.kill()
            self.process.wait(10)
        self.process = None

    def logged(self, text: str) -> int:
        """How many lines of the broker's log hold ``text``."""
        try:
            return self.log.read_text(encoding="utf-8", errors="replace").count(text)
        except FileNotFoundError:
            return 0


def publisher(port: int, inflight: int = 20):
    """A connected paho client (its network loop running) to publish test messages at QoS 1, with at
    most ``inflight`` messages waiting for the broker's acknowledgement (more wait in the client)."""
    import paho.mqtt.client as mqtt

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-publisher-{time.monotonic_ns()}")
    client.max_inflight_messages_set(inflight)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def publish_all(port: int, topic: str, payloads: list, pause: float = 0.0) -> None:
    """Publish each payload (str or bytes) at QoS 1 and wait until the broker acknowledged them all."""
    client = publisher(port)
    try:
        infos = []
        for payload in payloads:
            infos.append(client.publish(topic, payload, qos=1))
            if pause:
                time.sleep(pause)
        for info in infos:
            info.wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


class Relay:
    """A TCP relay between clients and the broker whose connections the test can cut, as a network
    fault does, while the broker stays up."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a, b) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for end in (a, b):
            try:
                end.close()
            except OSError:
                pass

    def cut(self) -> None:
        for end in self.open:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.open = []

    def close(self) -> None:
        self.cut()
        self.listener.close()
