"""A stand-in for GNOME Shell on a session bus: owns org.gnome.Shell and serves /org/gnome/Shell's
OverviewActive as gnome-shell does (js/ui/shellDBus.js): readable, writable (setting it shows or hides the
overview), and a PropertiesChanged from the name's owner whenever it changes. Used by test_desktop.py; run as
`python3 fake_gnome_shell.py ADDRESS`, it prints "ready" once it owns the name."""
import asyncio
import sys

from dbus_next import BusType, Variant
from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, dbus_property


class Shell(ServiceInterface):
    def __init__(self):
        super().__init__("org.gnome.Shell")
        self._open = False

    @dbus_property()
    def OverviewActive(self) -> "b":
        return self._open

    @OverviewActive.setter
    def OverviewActive(self, value: "b"):
        if value != self._open:
            self._open = value
            self.emit_properties_changed({"OverviewActive": value})


async def main(address):
    bus = await MessageBus(bus_address=address, bus_type=BusType.SESSION).connect()
    bus.export("/org/gnome/Shell", Shell())
    await bus.request_name("org.gnome.Shell")
    print("ready", flush=True)
    await bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
