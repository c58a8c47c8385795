import SmartStackCore
import Testing

/// A parameter of each type, shared by the configuration and widget-kind tests.
enum Schemas {
    static let units = ParameterSchema(
        name: "units", type: .enumeration, title: "Units", defaultValue: .enumCase("metric"),
        cases: [EnumCase(id: "metric", displayName: "Metric"), EnumCase(id: "imperial", displayName: "Imperial")])
    static let city = ParameterSchema(
        name: "city", type: .entity, suggestedEntities: [EntityOption(id: "berlin", displayName: "Berlin")])

    static func of(_ type: ParameterType) -> ParameterSchema {
        type == .enumeration ? units : ParameterSchema(name: "p", type: type)
    }
}

@Suite struct ConfigurationTests {
    private func bad(_ parameter: String, _ reason: String) -> CoreError {
        .invalidParameter(parameter: parameter, reason: reason)
    }

    // MARK: Parsing donated text

    @Test(arguments: [
        (ParameterType.string, "hello world", ConfigurationValue.string("hello world")),
        (.string, "", .string("")),
        (.bool, "true", .bool(true)),
        (.bool, "false", .bool(false)),
        (.int, "42", .int(42)),
        (.int, "-9223372036854775808", .int(Int64.min)),
        (.int, "+7", .int(7)),
        (.decimal, "2.5", .decimal(2.5)),
        (.decimal, "-3", .decimal(-3)),
        (.decimal, ".5", .decimal(0.5)),
        (.decimal, "1e3", .decimal(1000)),
        (.decimal, "1.5E-2", .decimal(0.015)),
        (.enumeration, "imperial", .enumCase("imperial")),
        (.entity, "berlin", .entity(id: "berlin", displayName: "Berlin")),
        (.entity, "paris", .entity(id: "paris", displayName: nil)),
        (.date, "2022-12-12T09:13:05.120-08:00", .date(Timestamp(microseconds: 1_670_865_185_120_000))),
        (.duration, "90", .duration(seconds: 90)),
        (.duration, "0.25", .duration(seconds: 0.25)),
        (.url, "https://example.com/a?b=c", .url("https://example.com/a?b=c")),
        (.url, "x-weather+v1.2:city/berlin", .url("x-weather+v1.2:city/berlin")),
        (.measurement, "12.5 km", .measurement(value: 12.5, unit: "km")),
        (.measurement, "-4 °C", .measurement(value: -4, unit: "°C")),
        (.measurement, "3 fl oz", .measurement(value: 3, unit: "fl oz")),
        (.currency, "9.99 EUR", .currency(amount: 9.99, code: "EUR")),
        (.currency, "-10 USD", .currency(amount: -10, code: "USD")),
    ])
    func parsesValidText(type: ParameterType, text: String, expected: ConfigurationValue) throws {
        let schema = type == .entity ? Schemas.city : Schemas.of(type)
        let value = try ConfigurationValue.parse(text, as: schema, parameter: "p")
        #expect(value == expected)
        #expect(value.type == type)
        if case .entity(_, let name) = expected, case .entity(_, let parsedName) = value {
            #expect(parsedName == name)
        }
    }

    @Test(arguments: [
        (ParameterType.bool, "True"), (.bool, "1"), (.bool, ""), (.bool, "yes"),
        (.int, "4.0"), (.int, "9223372036854775808"), (.int, " 1"), (.int, ""), (.int, "0x10"),
        (.decimal, "nan"), (.decimal, "inf"), (.decimal, "1e999"), (.decimal, "0x1p3"), (.decimal, "-"),
        (.decimal, "."), (.decimal, "1e"), (.decimal, "1,5"), (.decimal, " 2"), (.decimal, ""),
        (.enumeration, "Metric"), (.enumeration, ""),
        (.entity, ""),
        (.date, "2022-12-12T09:13:05"), (.date, "2022-02-30T00:00:00Z"), (.date, "yesterday"),
        (.duration, "-1"), (.duration, "PT1H"), (.duration, "inf"),
        (.url, "example.com"), (.url, "://x"), (.url, "1http://x"), (.url, "https://a b"), (.url, "ht tp:x"),
        (.url, "https://a\u{0}"), (.url, ""),
        (.measurement, "12.5"), (.measurement, "12.5 "), (.measurement, "km 12"), (.measurement, "1  km"),
        (.measurement, "nan km"),
        (.currency, "9.99"), (.currency, "9.99 eur"), (.currency, "9.99 EURO"), (.currency, "EUR 9.99"),
        (.currency, "9.99 E1R"), (.currency, "inf USD"),
    ])
    func rejectsInvalidText(type: ParameterType, text: String) {
        #expect(throws: CoreError.self) {
            try ConfigurationValue.parse(text, as: Schemas.of(type), parameter: "parameters.p")
        }
        do {
            _ = try ConfigurationValue.parse(text, as: Schemas.of(type), parameter: "parameters.p")
        } catch {
            #expect(error.parameter == "parameters.p")
        }
    }

    @Test func parseErrorsSayWhy() {
        #expect(throws: bad("q", "expected true or false, got 'yes'")) {
            try ConfigurationValue.parse("yes", as: Schemas.of(.bool), parameter: "q")
        }
        #expect(throws: bad("q", "'kelvin' is not a case; expected one of metric, imperial")) {
            try ConfigurationValue.parse("kelvin", as: Schemas.units, parameter: "q")
        }
        #expect(throws: bad("q", "expected 'AMOUNT CODE', got '12'")) {
            try ConfigurationValue.parse("12", as: Schemas.of(.currency), parameter: "q")
        }
        #expect(throws: bad("q", "'eur' is not an ISO 4217 code of three upper-case letters")) {
            try ConfigurationValue.parse("1 eur", as: Schemas.of(.currency), parameter: "q")
        }
        #expect(throws: bad("q", "must be a finite, non-negative number of seconds")) {
            try ConfigurationValue.parse("-5", as: Schemas.of(.duration), parameter: "q")
        }
        #expect(throws: bad("q", "invalid RFC 3339 time 'x': expected a date YYYY-MM-DD")) {
            try ConfigurationValue.parse("x", as: Schemas.of(.date), parameter: "q")
        }
        #expect(throws: bad("q", "longer than 4096 bytes")) {
            try ConfigurationValue.parse(String(repeating: "s", count: 4097), as: Schemas.of(.string), parameter: "q")
        }
    }

    // MARK: Match keys

    @Test(arguments: [
        (ConfigurationValue.string("a b"), "a b"), (.bool(true), "true"), (.bool(false), "false"),
        (.int(-12), "-12"), (.decimal(2.5), "2.5"), (.decimal(3), "3.0"), (.decimal(-0.0), "0.0"),
        (.decimal(0.1), "0.1"), (.decimal(1e20), "1e+20"), (.enumCase("metric"), "metric"),
        (.entity(id: "berlin", displayName: "Berlin"), "berlin"),
        (.date(Timestamp(microseconds: 1_670_865_185_120_000, utcOffsetSeconds: -28_800)), "2022-12-12T17:13:05.120Z"),
        (.date(Timestamp(microseconds: 1_670_865_185_120_042)), "2022-12-12T17:13:05.120042Z"),
        (.duration(seconds: 90), "90.0"), (.url("https://x.org"), "https://x.org"),
        (.measurement(value: 12.5, unit: "km"), "12.5 km"), (.currency(amount: 10, code: "EUR"), "10.0 EUR"),
    ])
    func matchKeys(value: ConfigurationValue, key: String) throws {
        #expect(value.matchKey == key)
        // Parsing a match key gives back an equal value.
        let schema = value.type == .entity ? Schemas.city : Schemas.of(value.type)
        let reparsed = try ConfigurationValue.parse(key, as: schema, parameter: "p")
        #expect(reparsed == value)
        #expect(reparsed.matchKey == key)
    }

    @Test func equalityIgnoresEntityNamesAndOffsets() {
        #expect(ConfigurationValue.entity(id: "b", displayName: "B") == .entity(id: "b", displayName: nil))
        #expect(ConfigurationValue.entity(id: "b", displayName: nil) != .entity(id: "c", displayName: nil))
        let instant = Timestamp(microseconds: 1_000_000)
        #expect(ConfigurationValue.date(instant) == .date(instant.withOffset(3_600)))
        #expect(ConfigurationValue.string("x") != .url("x"))
        #expect(ConfigurationValue.string("x") != .enumCase("x"))
        #expect(Set([ConfigurationValue.decimal(0), .decimal(-0.0), .int(0)]).count == 2)
    }

    // MARK: Schemas

    @Test func schemaKeepsItsParameters() throws {
        let schema = try IntentSchema(type: "SelectCityIntent", parameters: [Schemas.city, Schemas.units])
        #expect(schema.type == "SelectCityIntent")
        #expect(schema.parameters.map(\.name) == ["city", "units"])
        #expect(schema.parameter(named: "units")?.enumCase(id: "imperial")?.displayName == "Imperial")
        #expect(schema.parameter(named: "wind") == nil)
        #expect(ParameterType.enumeration.rawValue == "enum")
        #expect(
            ParameterType.allCases.map(\.rawValue) == [
                "string", "bool", "int", "decimal", "enum", "entity", "date", "duration", "url", "measurement",
                "currency",
            ])
    }

    @Test(arguments: [
        ("", [ParameterSchema](), "intent.type", "must be 1–255 bytes"),
        ("T", [ParameterSchema(name: "", type: .string)], "intent.parameters[0].name", "must not be empty"),
        (
            "T", [ParameterSchema(name: "a b", type: .string)], "intent.parameters[0].name",
            "contains ' '; only letters, digits, '.', '_' and '-' are allowed"
        ),
        (
            "T", [Schemas.city, ParameterSchema(name: "city", type: .string)], "intent.parameters[1].name",
            "duplicate parameter name 'city'"
        ),
        (
            "T", [ParameterSchema(name: "u", type: .enumeration)], "intent.parameters[0].cases",
            "an enum needs at least one case"
        ),
        (
            "T", [ParameterSchema(name: "u", type: .enumeration, cases: [EnumCase(id: "", displayName: "x")])],
            "intent.parameters[0].cases[0].id", "must be 1–4096 bytes"
        ),
        (
            "T",
            [
                ParameterSchema(
                    name: "u", type: .enumeration,
                    cases: [
                        EnumCase(id: "a", displayName: "A"), EnumCase(id: "a", displayName: "B"),
                    ])
            ], "intent.parameters[0].cases[1].id", "duplicate id 'a'"
        ),
        (
            "T", [ParameterSchema(name: "s", type: .string, cases: [EnumCase(id: "a", displayName: "A")])],
            "intent.parameters[0].cases", "only an enum parameter has cases"
        ),
        (
            "T",
            [ParameterSchema(name: "s", type: .string, suggestedEntities: [EntityOption(id: "a", displayName: "")])],
            "intent.parameters[0].suggestedEntities", "only an entity parameter has suggested entities"
        ),
        (
            "T",
            [
                ParameterSchema(
                    name: "c", type: .entity,
                    suggestedEntities: [
                        EntityOption(id: "a", displayName: "A"), EntityOption(id: "a", displayName: "A"),
                    ])
            ], "intent.parameters[0].suggestedEntities[1].id", "duplicate id 'a'"
        ),
        (
            "T", [Schemas.city, ParameterSchema(name: "n", type: .int, defaultValue: .string("3"))],
            "intent.parameters[1].default", "expected a value of type int, got string"
        ),
        (
            "T",
            [
                ParameterSchema(
                    name: "u", type: .enumeration, defaultValue: .enumCase("c"),
                    cases: [EnumCase(id: "a", displayName: "A")])
            ],
            "intent.parameters[0].default", "'c' is not a case; expected one of a"
        ),
        (
            "T", [ParameterSchema(name: "d", type: .decimal, defaultValue: .decimal(.infinity))],
            "intent.parameters[0].default", "must be a finite number"
        ),
        (
            "T", [ParameterSchema(name: "u", type: .url, defaultValue: .url("nope"))],
            "intent.parameters[0].default", "'nope' is not a URL: it needs a scheme such as 'https:' and no whitespace"
        ),
    ])
    func invalidSchemas(type: String, parameters: [ParameterSchema], parameter: String, reason: String) {
        #expect(throws: bad(parameter, reason)) { try IntentSchema(type: type, parameters: parameters) }
    }

    @Test func schemaErrorsUseTheCallersPath() {
        #expect(throws: bad("kinds[2].intent.parameters[0].name", "must not be empty")) {
            try IntentSchema(
                type: "T", parameters: [ParameterSchema(name: "", type: .bool)],
                parameter: "kinds[2].intent")
        }
    }

    // MARK: Validating configurations

    private func forecastSchema() throws -> IntentSchema {
        try IntentSchema(
            type: "ConfigureForecastIntent",
            parameters: [
                Schemas.city, Schemas.units,
                ParameterSchema(name: "days", type: .int, defaultValue: .int(3)),
                ParameterSchema(name: "note", type: .string, optional: true),
                ParameterSchema(name: "alerts", type: .bool, optional: true, defaultValue: .bool(true)),
            ])
    }

    @Test func defaultsAndOptionals() throws {
        let configuration = try forecastSchema().validate(["city": .entity(id: "berlin", displayName: "Berlin")])
        #expect(
            configuration.values == [
                "city": .entity(id: "berlin", displayName: "Berlin"), "units": .enumCase("metric"), "days": .int(3),
                "alerts": .bool(true),
            ])
        #expect(configuration["note"] == nil)
        #expect(configuration.canonicalKey == "alerts=bool:true;city=entity:berlin;days=int:3;units=enum:metric")
    }

    @Test func givenValuesOverrideDefaults() throws {
        let configuration = try forecastSchema().validate([
            "city": .entity(id: "paris", displayName: nil), "units": .enumCase("imperial"), "note": .string("hi"),
            "alerts": .bool(false),
        ])
        #expect(configuration["units"] == .enumCase("imperial"))
        #expect(configuration["note"] == .string("hi"))
        #expect(configuration["alerts"] == .bool(false))
        #expect(configuration["days"] == .int(3))
    }

    @Test func configurationErrors() throws {
        let schema = try forecastSchema()
        let berlin = ConfigurationValue.entity(id: "berlin", displayName: nil)
        #expect(throws: bad("configuration.city", "required")) { try schema.validate([:]) }
        #expect(throws: bad("configuration.city", "required")) { try schema.validate(["units": .enumCase("metric")]) }
        #expect(throws: bad("configuration.wind", "unknown parameter")) {
            try schema.validate(["city": berlin, "zeta": .bool(true), "wind": .bool(true)])
        }
        #expect(throws: bad("configuration.days", "expected a value of type int, got decimal")) {
            try schema.validate(["city": berlin, "days": .decimal(3)])
        }
        #expect(throws: bad("configuration.units", "'kelvin' is not a case; expected one of metric, imperial")) {
            try schema.validate(["city": berlin, "units": .enumCase("kelvin")])
        }
        #expect(throws: bad("configuration.city", "the entity id must be 1–4096 bytes")) {
            try schema.validate(["city": .entity(id: "", displayName: "Nowhere")])
        }
    }

    @Test(arguments: [
        (ConfigurationValue.decimal(.nan), "must be a finite number"),
        (.duration(seconds: -1), "must be a finite, non-negative number of seconds"),
        (.url("https://a b"), "'https://a b' is not a URL: it needs a scheme such as 'https:' and no whitespace"),
        (
            .measurement(value: 1, unit: ""),
            "the unit must be 1–255 bytes without control characters or surrounding spaces"
        ),
        (.measurement(value: .infinity, unit: "m"), "the value must be a finite number"),
        (.currency(amount: 1, code: "US"), "'US' is not an ISO 4217 code of three upper-case letters"),
        (.currency(amount: .nan, code: "USD"), "the amount must be a finite number"),
        (.string(String(repeating: "x", count: 4097)), "longer than 4096 bytes"),
    ])
    func invalidValuesOfEachType(value: ConfigurationValue, reason: String) throws {
        let schema = try IntentSchema(type: "T", parameters: [ParameterSchema(name: "v", type: value.type)])
        #expect(throws: bad("configuration.v", reason)) { try schema.validate(["v": value]) }
    }

    @Test(arguments: ParameterType.allCases)
    func everyTypeRejectsTheWrongType(type: ParameterType) throws {
        let schema = try IntentSchema(type: "T", parameters: [Schemas.of(type)])
        let name = schema.parameters[0].name
        let wrong: ConfigurationValue = type == .bool ? .int(1) : .bool(true)
        #expect(throws: bad("configuration.\(name)", "expected a value of type \(type.rawValue), got \(wrong.type)")) {
            try schema.validate([name: wrong])
        }
    }

    @Test func canonicalKeys() {
        #expect(Configuration().canonicalKey == "")
        #expect(Configuration(["b": .int(1), "a": .string("x;y=z%")]).canonicalKey == "a=string:x%3By%3Dz%25;b=int:1")
        #expect(Configuration(["a;b": .bool(true)]).canonicalKey == "a%3Bb=bool:true")
        // The readable form for suggestion ids: values as text, '&' between pairs.
        #expect(Configuration(["b": .int(1), "a": .string("x&y=z%;")]).queryText == "a=x%26y%3Dz%25;&b=1")
        #expect(Configuration(["city": .entity(id: "berlin", displayName: "Berlin")]).queryText == "city=berlin")
        // Keys differ exactly when configurations differ.
        let a = Configuration(["a": .string("1"), "b": .string("2")])
        let b = Configuration(["a": .string("1;b=string:2")])
        #expect(a != b)
        #expect(a.canonicalKey != b.canonicalKey)
        let named = Configuration(["c": .entity(id: "berlin", displayName: "Berlin")])
        let unnamed = Configuration(["c": .entity(id: "berlin", displayName: nil)])
        #expect(named == unnamed)
        #expect(named.canonicalKey == unnamed.canonicalKey)
        #expect(Configuration(["n": .int(1)]) != Configuration(["n": .decimal(1)]))
        #expect(Configuration(["n": .int(1)]).canonicalKey != Configuration(["n": .decimal(1)]).canonicalKey)
    }
}
