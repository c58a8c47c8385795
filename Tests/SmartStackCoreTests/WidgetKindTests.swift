import SmartStackCore
import Testing

@Suite struct WidgetKindTests {
    let weather: AppID
    let other: AppID
    let forecast: WidgetKind
    let berlin: Configuration
    let now = Timestamp(microseconds: 1_670_865_185_000_000)

    init() throws {
        weather = try AppID("com.example.weather")
        other = try AppID("com.example.other")
        let intent = try IntentSchema(type: "ConfigureForecastIntent", parameters: [Schemas.city, Schemas.units])
        forecast = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "forecast"), displayName: "Forecast",
            families: [.systemSmall, .systemMedium], intent: intent,
            predictionMappings: [
                PredictionMapping(intentType: "ViewForecastIntent", parameters: ["location": "city"]),
                PredictionMapping(intentType: "ShowMapIntent", parameters: ["place": "city", "system": "units"]),
            ])
        berlin = try forecast.validateConfiguration(["city": .entity(id: "berlin", displayName: "Berlin")])
    }

    func donation(_ intent: String, _ parameters: [String: String] = [:], app: AppID? = nil) -> Donation {
        Donation(id: "d", app: app ?? weather, intent: intent, parameters: parameters, date: now)
    }

    // MARK: Matching

    /// A kind is a value: built again from the same fields it equals (and hashes like) the first; any field
    /// differing makes another kind.
    @Test func kindsCompareByValue() throws {
        func kind(_ name: String = "Forecast", families: Set<WidgetFamily> = [.systemSmall, .systemMedium]) throws
            -> WidgetKind
        {
            try WidgetKind(
                id: forecast.id, displayName: name, families: families, intent: forecast.intent,
                predictionMappings: forecast.predictionMappings)
        }
        let again = try kind()
        #expect(again == forecast && again.hashValue == forecast.hashValue)
        #expect(try kind("Weather") != forecast)
        #expect(try kind(families: [.systemSmall]) != forecast)
        #expect(Set([forecast, again, try kind("Weather")]).count == 2)
        #expect(again.displayName == "Forecast" && again.families == [.systemSmall, .systemMedium])
    }

    @Test func configurationIntentMatchesOnSharedParameters() {
        #expect(forecast.matches(donation("ConfigureForecastIntent", ["city": "berlin"]), configuration: berlin))
        #expect(!forecast.matches(donation("ConfigureForecastIntent", ["city": "paris"]), configuration: berlin))
        #expect(
            forecast.matches(
                donation("ConfigureForecastIntent", ["city": "berlin", "units": "metric"]), configuration: berlin))
        #expect(
            !forecast.matches(
                donation("ConfigureForecastIntent", ["city": "berlin", "units": "imperial"]), configuration: berlin))
        // Parameters present on one side only do not count.
        #expect(forecast.matches(donation("ConfigureForecastIntent"), configuration: berlin))
        #expect(forecast.matches(donation("ConfigureForecastIntent", ["wind": "strong"]), configuration: berlin))
    }

    @Test func otherAppsAndIntentTypesNeverMatch() {
        #expect(
            !forecast.matches(
                donation("ConfigureForecastIntent", ["city": "berlin"], app: other), configuration: berlin))
        #expect(!forecast.matches(donation("OrderPizzaIntent", ["city": "berlin"]), configuration: berlin))
        #expect(!forecast.matches(donation("forecast"), configuration: berlin))
    }

    @Test func predictionMappingsRenameParameters() {
        #expect(forecast.matches(donation("ViewForecastIntent", ["location": "berlin"]), configuration: berlin))
        #expect(!forecast.matches(donation("ViewForecastIntent", ["location": "paris"]), configuration: berlin))
        // `city` is not in this mapping, so it is ignored.
        #expect(forecast.matches(donation("ViewForecastIntent", ["city": "paris"]), configuration: berlin))
        #expect(
            forecast.matches(donation("ShowMapIntent", ["place": "berlin", "system": "metric"]), configuration: berlin))
        #expect(
            !forecast.matches(
                donation("ShowMapIntent", ["place": "berlin", "system": "imperial"]), configuration: berlin))
        #expect(!forecast.matches(donation("ShowMapIntent", ["place": "berlin"], app: other), configuration: berlin))
    }

    @Test func aMappingForTheConfigurationIntentReplacesTheIdentity() throws {
        let intent = try IntentSchema(type: "ConfigureForecastIntent", parameters: [Schemas.city])
        let kind = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "forecast"), displayName: "Forecast", families: [.systemSmall],
            intent: intent,
            predictionMappings: [PredictionMapping(intentType: "ConfigureForecastIntent", parameters: ["town": "city"])]
        )
        let configuration = try kind.validateConfiguration(["city": .entity(id: "berlin", displayName: nil)])
        #expect(
            kind.matches(
                donation("ConfigureForecastIntent", ["town": "berlin", "city": "x"]), configuration: configuration))
        #expect(!kind.matches(donation("ConfigureForecastIntent", ["town": "paris"]), configuration: configuration))
    }

    @Test func valuesCompareByTypedMatchKey() throws {
        let intent = try IntentSchema(
            type: "T",
            parameters: [
                ParameterSchema(name: "price", type: .decimal), ParameterSchema(name: "at", type: .date),
                ParameterSchema(name: "on", type: .bool), ParameterSchema(name: "dist", type: .measurement),
            ])
        let kind = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "k"), displayName: "K", families: [.accessoryInline], intent: intent)
        let configuration = try kind.validateConfiguration([
            "price": .decimal(3), "at": .date(try Timestamp(rfc3339: "2022-12-12T17:00:00Z")), "on": .bool(true),
            "dist": .measurement(value: 5, unit: "km"),
        ])
        #expect(kind.matches(donation("T", ["price": "3"]), configuration: configuration))
        #expect(kind.matches(donation("T", ["price": "3.0"]), configuration: configuration))
        #expect(kind.matches(donation("T", ["price": "3e0"]), configuration: configuration))
        #expect(!kind.matches(donation("T", ["price": "3.5"]), configuration: configuration))
        #expect(!kind.matches(donation("T", ["price": "three"]), configuration: configuration))
        #expect(kind.matches(donation("T", ["at": "2022-12-12T09:00:00-08:00"]), configuration: configuration))
        #expect(!kind.matches(donation("T", ["at": "2022-12-12T09:00:00Z"]), configuration: configuration))
        #expect(kind.matches(donation("T", ["on": "true", "dist": "5 km"]), configuration: configuration))
        #expect(!kind.matches(donation("T", ["on": "TRUE"]), configuration: configuration))
        #expect(!kind.matches(donation("T", ["dist": "5 mi"]), configuration: configuration))
    }

    @Test func kindsWithoutAnIntent() throws {
        let plain = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "now"), displayName: "Now", families: [.systemSmall])
        let empty = Configuration()
        // Neither intent nor mappings: every donation of the app.
        #expect(plain.matches(donation("AnythingIntent", ["x": "1"]), configuration: empty))
        #expect(!plain.matches(donation("AnythingIntent", app: other), configuration: empty))

        let mapped = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "radar"), displayName: "Radar", families: [.systemLarge],
            predictionMappings: [PredictionMapping(intentType: "OpenRadarIntent")])
        #expect(mapped.matches(donation("OpenRadarIntent"), configuration: empty))
        #expect(mapped.matches(donation("radar"), configuration: empty))
        #expect(!mapped.matches(donation("AnythingIntent"), configuration: empty))
        #expect(!mapped.matches(donation("OpenRadarIntent", app: other), configuration: empty))
    }

    // MARK: Suggested configurations

    @Test func suggestedConfigurations() throws {
        let fromConfigure = forecast.suggestedConfiguration(
            for: donation("ConfigureForecastIntent", ["city": "berlin"]))
        #expect(fromConfigure == berlin)
        #expect(fromConfigure?["city"] == .entity(id: "berlin", displayName: "Berlin"))
        #expect(fromConfigure?["units"] == .enumCase("metric"))

        let fromMapping = forecast.suggestedConfiguration(
            for: donation("ShowMapIntent", ["place": "paris", "system": "imperial", "zoom": "3"]))
        #expect(fromMapping?.canonicalKey == "city=entity:paris;units=enum:imperial")
        #expect(
            fromMapping.map { forecast.matches(donation("ShowMapIntent", ["place": "paris"]), configuration: $0) }
                == true)
    }

    @Test func noSuggestionWithoutAMatchOrAValidConfiguration() throws {
        #expect(
            forecast.suggestedConfiguration(for: donation("ConfigureForecastIntent", ["city": "b"], app: other)) == nil)
        #expect(forecast.suggestedConfiguration(for: donation("OrderPizzaIntent", ["city": "berlin"])) == nil)
        // `city` is required and has no default.
        #expect(forecast.suggestedConfiguration(for: donation("ConfigureForecastIntent", ["units": "metric"])) == nil)
        #expect(
            forecast.suggestedConfiguration(
                for: donation("ConfigureForecastIntent", ["city": "berlin", "units": "kelvin"])) == nil)
        let plain = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "now"), displayName: "Now", families: [.systemSmall])
        #expect(plain.suggestedConfiguration(for: donation("X", ["a": "b"])) == Configuration())
        #expect(plain.suggestedConfiguration(for: donation("X", app: other)) == nil)
    }

    // MARK: Validation

    @Test func configurationOfAKindWithoutIntent() throws {
        let plain = try WidgetKind(
            id: WidgetKindID(app: weather, kind: "now"), displayName: "Now", families: [.systemSmall])
        #expect(try plain.validateConfiguration([:]) == Configuration())
        #expect(throws: CoreError.invalidParameter(parameter: "configuration.b", reason: "unknown parameter")) {
            try plain.validateConfiguration(["c": .bool(true), "b": .int(1)])
        }
        #expect(throws: CoreError.invalidParameter(parameter: "configuration.city", reason: "required")) {
            try forecast.validateConfiguration([:])
        }
    }

    @Test func invalidKinds() throws {
        let id = try WidgetKindID(app: weather, kind: "forecast")
        let intent = forecast.intent
        func kind(_ name: String = "F", _ families: Set<WidgetFamily> = [.systemSmall], _ mappings: [PredictionMapping])
            throws(CoreError) -> WidgetKind
        {
            try WidgetKind(id: id, displayName: name, families: families, intent: intent, predictionMappings: mappings)
        }
        #expect(throws: CoreError.invalidParameter(parameter: "displayName", reason: "must be 1–4096 bytes")) {
            try kind("", [.systemSmall], [])
        }
        #expect(throws: CoreError.invalidParameter(parameter: "families", reason: "a kind needs at least one family")) {
            try kind("F", [], [])
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "predictionMappings[1].parameters.where", reason: "no configuration parameter 'town'")
        ) {
            try kind(
                "F", [.systemSmall],
                [
                    PredictionMapping(intentType: "A", parameters: ["x": "city"]),
                    PredictionMapping(intentType: "B", parameters: ["where": "town"]),
                ])
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "predictionMappings[1].intentType", reason: "intent type 'A' is mapped twice")
        ) {
            try kind("F", [.systemSmall], [PredictionMapping(intentType: "A"), PredictionMapping(intentType: "A")])
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "predictionMappings[0].intentType", reason: "must be 1–255 bytes")
        ) {
            try kind("F", [.systemSmall], [PredictionMapping(intentType: "")])
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "predictionMappings[0].parameters.town",
                reason: "configuration parameter 'city' is mapped twice")
        ) {
            try kind(
                "F", [.systemSmall],
                [PredictionMapping(intentType: "A", parameters: ["place": "city", "town": "city"])])
        }
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "predictionMappings[0].parameters.place", reason: "no configuration parameter 'city'")
        ) {
            try WidgetKind(
                id: id, displayName: "F", families: [.systemSmall],
                predictionMappings: [PredictionMapping(intentType: "A", parameters: ["place": "city"])])
        }
    }
}
