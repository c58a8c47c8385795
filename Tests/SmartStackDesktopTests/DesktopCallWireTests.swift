import SmartStackCore
import SmartStackDesktop
import SmartStackProtocol
import Testing

/// Every call the tracker decides is one smartstackd's own request decoders accept, with the values meant.
struct DesktopCallWireTests {
    static let date = Timestamp(microseconds: 1_700_000_000_123_000, utcOffsetSeconds: -8 * 3600)

    @Test func callsDecodeAsTheServiceDecodesThem() throws {
        var tracker = DesktopTracker(configuration: DesktopConfiguration())
        guard
            case .launch(_, let calls) = tracker.unitStarted(
                UnitStart(
                    name: "app-gnome-org.gnome.Nautilus-1234.scope", invocationID: "0123456789abcdef0123456789abcdef",
                    date: Self.date))
        else {
            Issue.record("a launch")
            return
        }
        let looks = tracker.unlocked(at: Self.date.adding(seconds: 5))
        var methods: [String] = []
        for call in calls + looks {
            methods.append(call.method)
            switch call {
            case .registerWidget:
                #expect(call.method == RegisterWidgetRequest.method.rawValue)
                let request = try RegisterWidgetRequest(parameters: call.parameters)
                #expect(request.app.rawValue == "org.gnome.Nautilus")
                #expect(request.date?.rfc3339 == Self.date.rfc3339)
            case .configureStack:
                #expect(call.method == ConfigureStackRequest.method.rawValue)
                let request = try ConfigureStackRequest(parameters: call.parameters)
                #expect(request.stack.rawValue == "desktop.apps")
                #expect(request.widgets.count == 1)
                #expect(request.smartRotate)
            case .donate:
                #expect(call.method == DonateRequest.method.rawValue)
                let request = try DonateRequest(parameters: call.parameters)
                #expect(request.app.rawValue == "org.gnome.Nautilus")
                #expect(request.intent == "open")
                #expect(request.id == "invocation-0123456789abcdef0123456789abcdef")
                #expect(request.date?.rfc3339 == "2023-11-14T14:13:20.123-08:00", "the unit's start, local offset kept")
            case .recordLook:
                #expect(call.method == RecordLookRequest.method.rawValue)
                let request = try RecordLookRequest(parameters: call.parameters)
                #expect(request.stack.rawValue == "desktop.apps")
                #expect(request.date == Self.date.adding(seconds: 5))
            }
        }
        #expect(
            methods == [
                "io.smartstack.Provider.RegisterWidget", "io.smartstack.Shell.ConfigureStack",
                "io.smartstack.Provider.Donate",
                "io.smartstack.Shell.RecordLook",
            ])
    }

    /// Application ids that are not valid app ids (escaped in unit names) still give calls the service accepts.
    @Test(arguments: ["sur-A.#32770", "a b", "Ünïcode", String(repeating: "x", count: 300)])
    func oddApplicationIDsGiveValidCalls(id: String) throws {
        var tracker = DesktopTracker(configuration: DesktopConfiguration())
        let unit = UnitStart(name: "app-" + AppUnit.escape(id) + "-1.scope", invocationID: "1", date: Self.date)
        guard case .launch(let app, let calls) = tracker.unitStarted(unit) else {
            Issue.record("a launch")
            return
        }
        let donation = try #require(calls.last)
        #expect(donation.method == DonateRequest.method.rawValue)
        #expect(try DonateRequest(parameters: donation.parameters).app.rawValue == app)
        _ = try RegisterWidgetRequest(parameters: calls[0].parameters)
        _ = try ConfigureStackRequest(parameters: calls[1].parameters)
    }
}
