import Foundation
import SmartStackCore
import SmartStackDesktop
import SmartStackProtocol
import Testing

struct DesktopTrackerTests {
    static let base = Timestamp(microseconds: 1_700_000_000_000_000, utcOffsetSeconds: 3600)

    static func start(_ name: String, _ invocation: String, at seconds: Double) -> UnitStart {
        UnitStart(name: name, invocationID: invocation, date: base.adding(seconds: seconds))
    }

    static func configuration(size: Int = 3) -> DesktopConfiguration {
        var configuration = DesktopConfiguration()
        configuration.stackSize = size
        configuration.ignore = ["org.gnome.Terminal"]
        return configuration
    }

    @Test func firstLaunchRegistersConfiguresAndDonates() throws {
        var tracker = DesktopTracker(configuration: Self.configuration())
        let outcome = tracker.unitStarted(Self.start("app-gnome-org.gnome.Nautilus-1.scope", "aa", at: 0))
        let date = Self.base
        #expect(
            outcome
                == .launch(
                    app: "org.gnome.Nautilus",
                    calls: [
                        .registerWidget(
                            app: "org.gnome.Nautilus", kind: "launch", displayName: "org.gnome.Nautilus",
                            family: "systemMedium", date: date),
                        .configureStack(
                            stack: "desktop.apps", family: "systemMedium", kind: "launch", apps: ["org.gnome.Nautilus"],
                            date: date),
                        .donate(app: "org.gnome.Nautilus", id: "invocation-aa", date: date),
                    ]))
        // A second launch of the same app (another unit) only donates.
        let second = tracker.unitStarted(Self.start("app-gnome-org.gnome.Nautilus-2.scope", "bb", at: 60))
        #expect(
            second
                == .launch(
                    app: "org.gnome.Nautilus",
                    calls: [.donate(app: "org.gnome.Nautilus", id: "invocation-bb", date: date.adding(seconds: 60))]))
        #expect(tracker.state.launches == ["org.gnome.Nautilus": 2])
    }

    @Test func ignoresOtherUnitsAndTheIgnoreList() {
        var tracker = DesktopTracker(configuration: Self.configuration())
        #expect(tracker.unitStarted(Self.start("smartstackd.service", "01", at: 0)) == .notAnApp)
        #expect(tracker.unitStarted(Self.start("session-2.scope", "02", at: 0)) == .notAnApp)
        #expect(
            tracker.unitStarted(Self.start("app-gnome-org.gnome.Terminal-3.scope", "03", at: 0))
                == .ignored(applicationID: "org.gnome.Terminal"))
        #expect(tracker.state == DesktopTracker.State())
        #expect(tracker.unlocked(at: Self.base).isEmpty, "no look before the stack exists")
    }

    @Test func sameInvocationCountsOnceAndRepeatsWithinTheWindowCountOnce() {
        var tracker = DesktopTracker(configuration: Self.configuration())
        let unit = Self.start("app-flatpak-org.mozilla.firefox@5678.service", "cafe", at: 0)
        guard case .launch = tracker.unitStarted(unit) else {
            Issue.record("first start is a launch")
            return
        }
        // Seen again (catch-up after a reconnect, a restart of smartstack-desktop): nothing.
        #expect(tracker.unitStarted(unit) == .sameInvocation(app: "org.mozilla.firefox"))
        // The same unit restarted 2 s later with a new invocation: within the 5 s window, once.
        #expect(
            tracker.unitStarted(Self.start("app-flatpak-org.mozilla.firefox@5678.service", "beef", at: 2))
                == .repeatedWithin(app: "org.mozilla.firefox", seconds: 2))
        // After the window it is a launch again.
        guard
            case .launch = tracker.unitStarted(
                Self.start("app-flatpak-org.mozilla.firefox@5678.service", "f00d", at: 9))
        else {
            Issue.record("a start after the window is a launch")
            return
        }
        #expect(tracker.state.launches["org.mozilla.firefox"] == 2)
    }

    /// What smartstackd refused for good is planned again at the next launch: a refused registration and the
    /// configuration refused after it, and everything once a look finds smartstackd no longer knows the stack.
    @Test func refusedCallsArePlannedAgainAtTheNextLaunch() {
        var tracker = DesktopTracker(configuration: Self.configuration())
        func calls(_ unit: String, _ invocation: String, at seconds: Double) -> [DesktopCall] {
            if case .launch(_, let calls) = tracker.unitStarted(Self.start(unit, invocation, at: seconds)) {
                calls
            } else {
                []
            }
        }
        let first = calls("app-gnome-org.example.a-1.scope", "i1", at: 0)
        for call in first where call.method != "io.smartstack.Provider.Donate" {
            tracker.refused(call, errorName: "org.varlink.service.PermissionDenied")
        }
        let again = calls("app-gnome-org.example.a-2.scope", "i2", at: 60).map(\.method)
        #expect(
            again == [
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Provider.Donate",
            ])
        // Accepted now: a further launch plans only its donation.
        #expect(
            calls("app-gnome-org.example.a-3.scope", "i3", at: 120).map(\.method) == ["io.smartstack.Provider.Donate"])
        // A look at a stack smartstackd does not know (its state was wiped): everything is planned again.
        let looks = tracker.unlocked(at: Self.base.adding(seconds: 130))
        #expect(looks.count == 1)
        for look in looks { tracker.refused(look, errorName: "io.smartstack.Shell.NotFound") }
        #expect(tracker.unlocked(at: Self.base.adding(seconds: 140)).isEmpty, "no look at a stack not configured")
        #expect(calls("app-gnome-org.example.a-4.scope", "i4", at: 180).count == 3)
    }

    /// XDG autostart entries start at every login, not when the user chose the app: never a launch.
    @Test func autostartEntriesAreNotLaunches() {
        var tracker = DesktopTracker(configuration: Self.configuration())
        #expect(
            tracker.unitStarted(Self.start("app-org.kde.kdeconnect.daemon@autostart.service", "a1", at: 0))
                == .autostart(applicationID: "org.kde.kdeconnect.daemon"))
        #expect(tracker.state.launches.isEmpty)
        guard case .launch = tracker.unitStarted(Self.start("app-org.kde.kdeconnect.app@a2b3.service", "a2", at: 1))
        else {
            Issue.record("the same app chosen by the user is a launch")
            return
        }
    }

    @Test func stackIsTheMostLaunchedAndReconfiguresOnlyWhenItsSetChanges() {
        var tracker = DesktopTracker(configuration: Self.configuration(size: 2))
        var configurations: [[String]] = []
        var time = 0.0
        var invocation = 0
        func launch(_ app: String) {
            time += 60
            invocation += 1
            if case .launch(_, let calls) = tracker.unitStarted(
                Self.start("app-\(app)-\(invocation).scope", "i\(invocation)", at: time))
            {
                for case .configureStack(_, _, _, let apps, _) in calls { configurations.append(apps) }
            }
        }
        launch("a")  // [a]
        launch("b")  // [a, b]
        launch("b")  // same set: no call
        launch("c")  // c has 1, a has 1 (earlier): set stays {b, a}
        launch("c")  // c 2 > a 1: {b, c}
        #expect(configurations == [["a"], ["a", "b"], ["b", "c"]])
        #expect(tracker.mostLaunched() == ["b", "c"])
        #expect(tracker.unlocked(at: Self.base) == [.recordLook(stack: "desktop.apps", date: Self.base)])
    }

    /// One unlock is one look, whichever of logind's signals carry it: `loginctl unlock-session` on a desktop with
    /// a screen locker sends `Unlock`, then the locker turns `LockedHint` false.
    @Test func oneUnlockIsOneLookWhateverSignalsCarryIt() {
        var configuration = Self.configuration()
        configuration.apps = ["x"]
        var tracker = DesktopTracker(configuration: configuration)
        _ = tracker.prepare(at: Self.base)
        func looks(_ signals: [SessionSignal], session: String = "2") -> Int {
            signals.reduce(0) { count, signal in
                count + tracker.sessionSignal(signal, session: session, at: Self.base).count
            }
        }
        // Locked, then unlocked through loginctl: Unlock, then the locker's LockedHint false. One look.
        #expect(looks([.lockedHint(true), .unlock, .lockedHint(false)]) == 1)
        // Locked and unlocked at the locker (typing the password): LockedHint alone.
        #expect(looks([.lockedHint(true), .lockedHint(false)]) == 1)
        // No locker: Unlock alone is the look, each time.
        #expect(looks([.unlock]) == 1)
        #expect(looks([.unlock]) == 1)
        // The lock not known yet (the agent just started): LockedHint false counts, and Unlock after it again.
        #expect(looks([.lockedHint(false)], session: "3") == 1)
        #expect(looks([.unlock, .lockedHint(false)], session: "4") == 1)
        // Locking is no look; sessions are apart.
        #expect(looks([.lockedHint(true)], session: "3") == 0)
        #expect(looks([.unlock], session: "5") == 1)
        #expect(looks([.lockedHint(false)], session: "3") == 1)
        // Reconnected to the bus: a lock believed held (its unlock may have been missed) swallows no Unlock.
        #expect(looks([.lockedHint(true)], session: "6") == 0)
        tracker.busConnected()
        #expect(looks([.unlock], session: "6") == 1)
    }

    /// GNOME Shell's overview opening is a look, once per opening; closing it is none; the first opening seen
    /// after a reconnect counts; none before the stack exists, and none with `overviewLooks` off.
    @Test func eachOpeningOfTheOverviewIsOneLook() {
        var configuration = Self.configuration()
        configuration.apps = ["x"]
        var tracker = DesktopTracker(configuration: configuration)
        #expect(tracker.overview(open: true, at: Self.base).isEmpty)  // no stack yet
        _ = tracker.prepare(at: Self.base)
        _ = tracker.overview(open: false, at: Self.base)
        func looks(_ states: [Bool]) -> Int {
            states.reduce(0) { count, open in count + tracker.overview(open: open, at: Self.base).count }
        }
        #expect(tracker.overview(open: true, at: Self.base) == [.recordLook(stack: "desktop.apps", date: Self.base)])
        #expect(looks([true, true]) == 0)  // still the same opening
        #expect(looks([false]) == 0)
        #expect(looks([true, false, true, false]) == 2)
        _ = tracker.overview(open: true, at: Self.base)
        tracker.busConnected()
        #expect(looks([true]) == 1)  // state unknown after the reconnect: its opening was not counted
        // The overview does not touch the sessions' locks, nor they it.
        #expect(tracker.sessionSignal(.unlock, session: "2", at: Self.base).count == 1)
        #expect(looks([false, true]) == 1)

        configuration.overviewLooks = false
        var off = DesktopTracker(configuration: configuration)
        _ = off.prepare(at: Self.base)
        #expect(off.overview(open: true, at: Self.base).isEmpty)
        #expect(off.sessionSignal(.unlock, session: "2", at: Self.base).count == 1)
    }

    @Test func fixedAppsAreRegisteredAndConfiguredOnce() {
        var configuration = Self.configuration()
        configuration.apps = ["x", "y"]
        var tracker = DesktopTracker(configuration: configuration)
        guard case .launch(_, let calls) = tracker.unitStarted(Self.start("app-z-1.scope", "1", at: 0)) else {
            Issue.record("a launch")
            return
        }
        #expect(
            calls.map(\.method) == [
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Provider.RegisterWidget",
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Provider.Donate",
            ])
        guard case .launch(_, let later) = tracker.unitStarted(Self.start("app-x-2.scope", "2", at: 60)) else {
            Issue.record("a launch")
            return
        }
        #expect(later.map(\.method) == ["io.smartstack.Provider.Donate"])
    }

    @Test func fixedAppsArePreparedAtStartUp() {
        var configuration = Self.configuration()
        configuration.apps = ["x", "y"]
        var tracker = DesktopTracker(configuration: configuration)
        #expect(tracker.unlocked(at: Self.base).isEmpty)
        #expect(
            tracker.prepare(at: Self.base) == [
                .registerWidget(app: "x", kind: "launch", displayName: "x", family: "systemMedium", date: Self.base),
                .registerWidget(app: "y", kind: "launch", displayName: "y", family: "systemMedium", date: Self.base),
                .configureStack(
                    stack: "desktop.apps", family: "systemMedium", kind: "launch", apps: ["x", "y"], date: Self.base),
            ])
        #expect(tracker.prepare(at: Self.base).isEmpty, "once")
        #expect(tracker.unlocked(at: Self.base) == [.recordLook(stack: "desktop.apps", date: Self.base)])
        guard case .launch(_, let calls) = tracker.unitStarted(Self.start("app-z-1.scope", "1", at: 1)) else {
            Issue.record("a launch")
            return
        }
        #expect(calls.map(\.method) == ["io.smartstack.Provider.RegisterWidget", "io.smartstack.Provider.Donate"])
        // An adaptive tracker has nothing to prepare.
        var adaptive = DesktopTracker(configuration: Self.configuration())
        #expect(adaptive.prepare(at: Self.base).isEmpty)
    }

    @Test func stateSurvivesARestart() throws {
        var tracker = DesktopTracker(configuration: Self.configuration())
        _ = tracker.unitStarted(Self.start("app-a-1.scope", "i1", at: 0))
        let stored = try JSONEncoder().encode(tracker.state)
        var restarted = DesktopTracker(
            configuration: Self.configuration(),
            state: try JSONDecoder().decode(DesktopTracker.State.self, from: stored))
        #expect(restarted.unitStarted(Self.start("app-a-1.scope", "i1", at: 0)) == .sameInvocation(app: "a"))
        guard case .launch(_, let calls) = restarted.unitStarted(Self.start("app-a-2.scope", "i2", at: 60)) else {
            Issue.record("a launch")
            return
        }
        #expect(
            calls.map(\.method) == ["io.smartstack.Provider.Donate"], "registered and configured before the restart")
    }

    @Test func callsRoundTripThroughTheirWireForm() throws {
        let calls: [DesktopCall] = [
            .registerWidget(app: "a", kind: "launch", displayName: "A", family: "systemSmall", date: Self.base),
            .configureStack(stack: "s", family: "systemSmall", kind: "launch", apps: ["a", "b"], date: Self.base),
            .donate(app: "a", id: "invocation-1", date: Self.base),
            .recordLook(stack: "s", date: Self.base),
        ]
        let decoded = try JSONDecoder().decode([DesktopCall].self, from: JSONEncoder().encode(calls))
        #expect(decoded == calls)
        #expect(
            calls[1].parameters["widgets"] == [
                ["instance": "s/a", "app": "a", "kind": "launch"], ["instance": "s/b", "app": "b", "kind": "launch"],
            ])
        #expect(calls[2].parameters["date"] == .string("2023-11-14T23:13:20.000+01:00"))
    }

    /// Seeded random launches: every counted launch is donated exactly once with a unique id, the stack is
    /// always the K most launched, and replaying any start again adds nothing.
    @Test(arguments: [1, 2, 3])
    func invariants(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var tracker = DesktopTracker(configuration: Self.configuration(size: 3))
        var ids: Set<String> = []
        var seen: [UnitStart] = []
        var time = 0.0
        for index in 0..<400 {
            time += Double(random.next() % 20)
            let app = "app\(random.next() % 8)"
            let start = Self.start("app-\(app)-\(random.next() % 5).scope", "inv\(index)", at: time)
            seen.append(start)
            if case .launch(_, let calls) = tracker.unitStarted(start) {
                for case .donate(_, let id, _) in calls { #expect(ids.insert(id).inserted) }
            }
            #expect(Set(tracker.state.stackApps) == Set(tracker.mostLaunched()))
            if let again = seen.randomElement(using: &random) { #expect(!isLaunch(tracker.unitStarted(again))) }
        }
        #expect(ids.count == tracker.state.launches.values.reduce(0, +))
    }

    func isLaunch(_ outcome: LaunchOutcome) -> Bool {
        if case .launch = outcome { return true }
        return false
    }
}

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
