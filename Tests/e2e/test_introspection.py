"""org.varlink.service: GetInfo and GetInterfaceDescription, parsed by the Python client's own parser."""
import varlink

from conftest import INTERFACES
from helpers import call

NAMES = ["org.varlink.service", "io.smartstack.Provider", "io.smartstack.Shell", "io.smartstack.Admin"]


def test_get_info_lists_every_interface(daemon):
    info = call(daemon.address, "org.varlink.service", "GetInfo")
    assert info["product"] == "smartstackd"
    assert info["vendor"]
    assert info["version"]
    assert sorted(info["interfaces"]) == sorted(NAMES)


def test_interface_descriptions_are_the_repository_files_and_parse(daemon):
    for name in NAMES:
        reply = call(daemon.address, "org.varlink.service", "GetInterfaceDescription", interface=name)
        text = reply["description"]
        assert text == (INTERFACES / f"{name}.varlink").read_text()
        parsed = varlink.Interface(text)
        assert parsed.name == name
    # The client's own parser, through open(): it fetches and parses the description itself.
    with varlink.Client(address=daemon.address) as client:
        for name in NAMES[1:]:
            with client.open(name) as remote:
                # The proxy the client built from the description it parsed has the interface's methods.
                members = varlink.Interface((INTERFACES / f"{name}.varlink").read_text()).members
                methods = {member for member, kind in members.items() if type(kind).__name__ == "_Method"}
                assert methods and all(callable(getattr(remote, method)) for method in methods)


def test_unknown_interface_description_is_a_typed_error(daemon):
    with varlink.Client(address=daemon.address) as client:
        with client.open("org.varlink.service", namespaced=False) as service:
            try:
                service.GetInterfaceDescription(interface="io.example.Nope")
            except varlink.VarlinkError as error:
                assert error.error() == "org.varlink.service.InterfaceNotFound"
                assert error.parameters()["interface"] == "io.example.Nope"
            else:
                raise AssertionError("expected InterfaceNotFound")
