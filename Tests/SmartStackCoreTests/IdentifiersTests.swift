import SmartStackCore
import Testing

@Suite struct IdentifiersTests {
    @Test(arguments: ["com.example.weather", "a", "A-b_c.9", String(repeating: "x", count: 255)])
    func validAppIDs(_ raw: String) throws {
        let app = try AppID(raw)
        #expect(app.rawValue == raw)
        #expect(app.description == raw)
    }

    @Test func appIDErrorsNameTheParameter() {
        #expect(throws: CoreError.invalidParameter(parameter: "app", reason: "must not be empty")) {
            try AppID("")
        }
        #expect(throws: CoreError.invalidParameter(parameter: "app", reason: "is 256 bytes; at most 255 allowed")) {
            try AppID(String(repeating: "x", count: 256))
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "kinds[0].app", reason: "contains '/'; only letters, digits, '.', '_' and '-' are allowed")
        ) {
            try AppID("com.example/weather", parameter: "kinds[0].app")
        }
    }

    @Test(arguments: ["com example", "com:example", "wëather", "tab\there", "semi;colon"])
    func invalidAppIDs(_ raw: String) {
        #expect(throws: CoreError.self) { try AppID(raw) }
        #expect((try? AppID(raw)) == nil)
    }

    @Test func appIDOrderAndHashing() throws {
        let a = try AppID("com.a")
        let b = try AppID("com.b")
        #expect(a < b)
        #expect(!(b < a))
        #expect(Set([a, try AppID("com.a"), b]).count == 2)
    }

    @Test func widgetKindIDs() throws {
        let app = try AppID("com.example.weather")
        let kind = try WidgetKindID(app: app, kind: "forecast/daily-v2.1_x")
        #expect(kind.app == app)
        #expect(kind.kind == "forecast/daily-v2.1_x")
        #expect(kind.description == "com.example.weather/forecast/daily-v2.1_x")
        #expect(throws: CoreError.invalidParameter(parameter: "kind", reason: "must not be empty")) {
            try WidgetKindID(app: app, kind: "")
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "kind", reason: "contains ' '; only letters, digits, '.', '_', '/' and '-' are allowed")
        ) {
            try WidgetKindID(app: app, kind: "daily forecast")
        }
        #expect(throws: CoreError.invalidParameter(parameter: "k", reason: "is 256 bytes; at most 255 allowed")) {
            try WidgetKindID(app: app, kind: String(repeating: "k", count: 256), parameter: "k")
        }
    }

    @Test func widgetKindIDOrdersByAppThenKind() throws {
        let a = try AppID("com.a")
        let b = try AppID("com.b")
        let ids = [
            try WidgetKindID(app: b, kind: "a"), try WidgetKindID(app: a, kind: "z"),
            try WidgetKindID(app: a, kind: "b"),
        ]
        #expect(ids.sorted().map(\.description) == ["com.a/b", "com.a/z", "com.b/a"])
    }

    @Test(arguments: ["desk-1", "a", "{uuid:1234}", "~!@#$%^&*()", String(repeating: "i", count: 255)])
    func validShellIDs(_ raw: String) throws {
        #expect(try InstanceID(raw).rawValue == raw)
        #expect(try StackID(raw).rawValue == raw)
    }

    @Test(arguments: ["", "with space", "tab\t", "new\nline", "é", "\u{7F}", String(repeating: "i", count: 256)])
    func invalidShellIDs(_ raw: String) {
        #expect((try? InstanceID(raw)) == nil)
        #expect((try? StackID(raw)) == nil)
    }

    @Test func shellIDErrorsNameTheParameter() throws {
        #expect(throws: CoreError.invalidParameter(parameter: "instance", reason: "must not be empty")) {
            try InstanceID("")
        }
        #expect(throws: CoreError.invalidParameter(parameter: "stack", reason: "must not be empty")) {
            try StackID("")
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "stacks[1].id", reason: "contains ' '; only printable ASCII without spaces are allowed")
        ) {
            try StackID("a b", parameter: "stacks[1].id")
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "instance", reason: "contains '\\n'; only printable ASCII without spaces are allowed")
        ) {
            try InstanceID("a\nb")
        }
        #expect(try InstanceID("b") > InstanceID("a"))
        #expect(try StackID("desk") < StackID("kitchen"))
    }

    @Test func families() throws {
        #expect(
            WidgetFamily.allCases.map(\.rawValue) == [
                "systemSmall", "systemMedium", "systemLarge", "systemExtraLarge",
                "accessoryCircular", "accessoryRectangular", "accessoryInline",
            ])
        for family in WidgetFamily.allCases {
            #expect(try WidgetFamily(parsing: family.rawValue, parameter: "family") == family)
        }
        #expect(WidgetFamily.systemSmall < .accessoryInline)
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "stack.family",
                reason: "unknown family 'small'; expected one of systemSmall, systemMedium, systemLarge, "
                    + "systemExtraLarge, accessoryCircular, accessoryRectangular, accessoryInline")
        ) {
            try WidgetFamily(parsing: "small", parameter: "stack.family")
        }
        #expect((try? WidgetFamily(parsing: "SystemSmall", parameter: "f")) == nil)
    }
}
