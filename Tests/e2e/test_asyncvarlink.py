"""A second, independent Varlink client against the real smartstackd: asyncvarlink (PyPI), an asyncio
implementation with its own framing, JSON handling and type conversion (driven by Python type annotations, so
every reply is converted to and checked against the types declared here, from the interface files).

Covered: introspection (org.varlink.service GetInfo and GetInterfaceDescription), calls with every parameter
shape the interfaces use (string, bool, int, float, enum, optional/null, arrays of enums and of structs, nested
structs, string maps, a float map in a reply, `object`), a typed error, a `more` call (a stream of replies) and
a `oneway` call (no reply, its effect seen by the next call).
"""
import asyncio
import enum
import typing

import asyncvarlink  # installed by `make deps`
import pytest
from asyncvarlink import (
    TypedVarlinkErrorReply,
    VarlinkClientProtocol,
    VarlinkInterface,
    connect_unix_varlink,
    varlinkmethod,
)
from asyncvarlink.serviceinterface import VarlinkServiceInterface

from helpers import now_plus


class Family(enum.Enum):
    systemSmall = "systemSmall"
    systemMedium = "systemMedium"
    systemLarge = "systemLarge"


class ParameterType(enum.Enum):
    string = "string"
    enum = "enum"
    int = "int"


class ReloadPolicyKind(enum.Enum):
    atEnd = "atEnd"
    after = "after"
    never = "never"


class Reason(enum.Enum):
    relevance = "relevance"
    behaviour = "behaviour"
    engagement = "engagement"
    pinned = "pinned"
    userOrder = "userOrder"
    manualSwipe = "manualSwipe"
    suggestion = "suggestion"
    liveActivity = "liveActivity"
    rotationLimited = "rotationLimited"
    notRelevant = "notRelevant"
    expired = "expired"


# Required members in a base class, optional ones (`?T`) in a subclass with total=False: asyncvarlink reads
# __annotations__ and __optional_keys__, not typing.Required.
class _EnumCase(typing.TypedDict):
    id: str


class EnumCase(_EnumCase, total=False):
    displayName: str | None


class _IntentParameter(typing.TypedDict):
    name: str
    type: ParameterType


class IntentParameter(_IntentParameter, total=False):
    title: str | None
    optional: bool | None
    default: str | None
    cases: list[EnumCase] | None


class Intent(typing.TypedDict):
    type: str
    parameters: list[IntentParameter]


class _PredictionMapping(typing.TypedDict):
    intent: str


class PredictionMapping(_PredictionMapping, total=False):
    parameters: dict[str, str] | None


class _Widget(typing.TypedDict):
    instance: str
    app: str
    kind: str


class Widget(_Widget, total=False):
    configuration: dict[str, typing.Any] | None  # varlink `object`


class Relevance(typing.TypedDict):
    score: float
    duration: float


class _TimelineEntry(typing.TypedDict):
    date: str


class TimelineEntry(_TimelineEntry, total=False):
    relevance: Relevance | None


class _ReloadPolicy(typing.TypedDict):
    kind: ReloadPolicyKind


class ReloadPolicy(_ReloadPolicy, total=False):
    date: str | None


class _Entry(typing.TypedDict):
    instance: str
    position: int
    score: float
    suggested: bool
    pinned: bool
    reason: Reason
    contributions: dict[str, float]


class Entry(_Entry, total=False):
    app: str | None
    kind: str | None


class _Donation(typing.TypedDict):
    id: str
    intent: str
    parameters: dict[str, str]
    date: str


class Donation(_Donation, total=False):
    groupId: str | None


class DonationPage(typing.TypedDict):
    donations: list[Donation]
    next: str


class _StackReply(typing.TypedDict):
    stack: str
    revision: int
    order: list[Entry]


class StackReply(_StackReply, total=False):
    date: str | None


class NotFound(TypedVarlinkErrorReply, interface="io.smartstack.Shell", paramprefix=""):
    class Parameters:
        kind: str
        id: str


class Provider(VarlinkInterface, name="io.smartstack.Provider"):
    """The methods of io.smartstack.Provider this test calls, typed as its interface file declares them."""

    @varlinkmethod
    def RegisterWidget(self, *, app: str, kind: str, displayName: str | None = None, families: list[Family],
                       intent: Intent | None = None,
                       predictionMapping: list[PredictionMapping] | None = None) -> None:
        raise NotImplementedError

    @varlinkmethod(return_parameter="id")
    def Donate(self, *, app: str, intent: str, parameters: dict[str, str] | None = None,
               id: str | None = None) -> str:
        raise NotImplementedError

    @varlinkmethod
    def ListDonations(self, *, app: str, cursor: str | None = None, limit: int | None = None) -> DonationPage:
        raise NotImplementedError

    # `object` is what asyncvarlink calls a foreign type: allowed explicitly.
    @varlinkmethod(return_parameter="warnings", allow_foreign=True)
    def SubmitTimeline(self, *, app: str, kind: str, instance: str | None = None,
                       configuration: dict[str, typing.Any] | None = None, entries: list[TimelineEntry],
                       policy: ReloadPolicy | None = None) -> list[str]:
        raise NotImplementedError


class Shell(VarlinkInterface, name="io.smartstack.Shell"):
    """The methods of io.smartstack.Shell this test calls."""

    errors = (NotFound,)

    @varlinkmethod(return_parameter="revision", allow_foreign=True)
    def ConfigureStack(self, *, stack: str, family: Family, widgets: list[Widget], smartRotate: bool | None = None,
                       suggestions: bool | None = None, pinned: str | None = None,
                       developerMode: bool | None = None) -> int:
        raise NotImplementedError

    @varlinkmethod
    def GetStack(self, *, stack: str, at: str | None = None) -> StackReply:
        raise NotImplementedError

    @varlinkmethod
    def Subscribe(self, *, stacks: list[str] | None = None) -> typing.Iterator[StackReply]:
        raise NotImplementedError


async def connect(daemon):
    transport, protocol = await connect_unix_varlink(VarlinkClientProtocol, daemon.socket_path)
    return transport, protocol


def run(coroutine, timeout=60):
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def test_introspection(daemon):
    async def scenario():
        transport, protocol = await connect(daemon)
        try:
            service = protocol.make_proxy(VarlinkServiceInterface)
            info = await service.GetInfo()
            assert info["product"] == "smartstackd"
            assert set(info["interfaces"]) >= {"org.varlink.service", "io.smartstack.Provider",
                                               "io.smartstack.Shell", "io.smartstack.Admin"}
            for interface, stub in (("io.smartstack.Provider", Provider), ("io.smartstack.Shell", Shell)):
                # A proxy gives a reply's parameters as a dict, also for a single return parameter.
                description = (await service.GetInterfaceDescription(interface=interface))["description"]
                assert f"interface {interface}" in description
                # Every method this test's stubs declare is in the service's own description.
                methods = [name for name in vars(stub) if not name.startswith("_") and callable(getattr(stub, name))
                           and name[0].isupper()]
                assert methods
                for method in methods:
                    assert f"method {method}(" in description, method
            with pytest.raises(asyncvarlink.serviceinterface.InterfaceNotFound):
                await service.GetInterfaceDescription(interface="com.example.Nothing")
        finally:
            transport.close()

    run(scenario())


def test_every_parameter_shape_an_error_more_and_oneway(daemon):
    async def scenario():
        transport, protocol = await connect(daemon)
        try:
            provider = protocol.make_proxy(Provider)
            shell = protocol.make_proxy(Shell)
            # Strings, an array of enums, optional values left out and given, nested structs with arrays of
            # structs and an enum, a string map.
            weather_intent = Intent(type="WeatherIntent", parameters=[
                IntentParameter(name="city", type=ParameterType.string, title="City", optional=False,
                                default="Paris"),
                IntentParameter(name="unit", type=ParameterType.enum, optional=True,
                                cases=[EnumCase(id="c", displayName="Celsius"), EnumCase(id="f")]),
            ])
            assert await provider.RegisterWidget(
                app="com.example.weather", kind="main", displayName="Weather",
                families=[Family.systemMedium, Family.systemSmall], intent=weather_intent,
                predictionMapping=[PredictionMapping(intent="open", parameters={"city": "city"})]) == {}
            for app in ("mail", "news"):
                await provider.RegisterWidget(app=f"com.example.{app}", kind="main", families=[Family.systemMedium])
            # `object` (a widget's configuration), bools and an enum; an int back.
            widgets = [Widget(instance="weather", app="com.example.weather", kind="main",
                              configuration={"city": "Paris", "unit": "c"}),
                       Widget(instance="mail", app="com.example.mail", kind="main"),
                       Widget(instance="news", app="com.example.news", kind="main", configuration=None)]
            revision = (await shell.ConfigureStack(stack="home", family=Family.systemMedium, widgets=widgets,
                                                   smartRotate=True, developerMode=False))["revision"]
            assert isinstance(revision, int) and revision >= 1
            # Floats inside structs, an optional struct, an enum in a struct; an array of strings back.
            submitted = await provider.SubmitTimeline(
                app="com.example.weather", kind="main", instance="weather",
                entries=[TimelineEntry(date=now_plus(-60), relevance=Relevance(score=0.75, duration=1800.0)),
                         TimelineEntry(date=now_plus(3600))],
                policy=ReloadPolicy(kind=ReloadPolicyKind.atEnd))
            assert isinstance(submitted["warnings"], list)
            # A reply with an array of structs, enums and a map of floats, converted by asyncvarlink.
            stack = await shell.GetStack(stack="home")
            assert stack["stack"] == "home" and stack["revision"] >= revision
            assert sorted(entry["instance"] for entry in stack["order"]) == ["mail", "news", "weather"]
            for entry in stack["order"]:
                assert isinstance(entry["reason"], Reason)
                assert all(isinstance(value, float) for value in entry["contributions"].values())
            # A typed error with its parameters.
            with pytest.raises(NotFound) as missing:
                await shell.GetStack(stack="nowhere")
            assert missing.value.kind == "stack" and missing.value.id == "nowhere"
            # A string map and an optional string; the id comes back.
            assert await provider.Donate(app="com.example.mail", intent="open", parameters={"folder": "inbox"},
                                         id="d1") == {"id": "d1"}
            # oneway: no reply; the next call on the same connection sees its effect.
            assert await provider.Donate.oneway(app="com.example.mail", intent="open",
                                                parameters={"folder": "sent"}, id="d2") is None
            page = await provider.ListDonations(app="com.example.mail", limit=1)
            rest = await provider.ListDonations(app="com.example.mail", cursor=page["next"], limit=10)
            donations = page["donations"] + rest["donations"]
            assert {donation["id"]: donation["parameters"] for donation in donations} == {
                "d1": {"folder": "inbox"}, "d2": {"folder": "sent"}}
        finally:
            transport.close()

        # more: a subscription's replies, the current order first, then one per change.
        transport, protocol = await connect(daemon)
        other, other_protocol = await connect(daemon)
        try:
            shell = protocol.make_proxy(Shell)
            other_shell = other_protocol.make_proxy(Shell)
            replies = []
            async for reply in shell.Subscribe(stacks=["home"]):
                replies.append(reply)
                if len(replies) == 1:
                    assert reply["stack"] == "home"
                    # Pin news on top from another connection: the stream reports the new order.
                    await other_shell.ConfigureStack(
                        stack="home", family=Family.systemMedium, pinned="news",
                        widgets=[Widget(instance="weather", app="com.example.weather", kind="main"),
                                 Widget(instance="mail", app="com.example.mail", kind="main"),
                                 Widget(instance="news", app="com.example.news", kind="main")])
                elif reply["order"][0]["instance"] == "news":
                    break
                assert len(replies) < 10, replies
            assert replies[-1]["order"][0]["instance"] == "news"
            assert replies[-1]["order"][0]["reason"] == Reason.pinned
            assert replies[-1]["revision"] > replies[0]["revision"]
        finally:
            transport.close()
            other.close()

    run(scenario())
