import SmartStackCore
import Testing

@Suite struct DonationTests {
    let app: AppID
    let other: AppID
    let date = Timestamp(microseconds: 1_670_865_185_000_000)

    init() throws {
        app = try AppID("com.example.weather")
        other = try AppID("com.example.other")
    }

    private func bad(_ parameter: String, _ reason: String) -> CoreError {
        .invalidParameter(parameter: parameter, reason: reason)
    }

    // MARK: Validation

    @Test func validDonationKeepsItsFields() throws {
        let donation = try Donation.validated(
            id: "d1", app: app, intent: "ViewForecastIntent", parameters: ["city": "berlin", "note": ""],
            date: date, groupId: "trip")
        #expect(donation.id == "d1")
        #expect(donation.app == app)
        #expect(donation.intent == "ViewForecastIntent")
        #expect(donation.parameters == ["city": "berlin", "note": ""])
        #expect(donation.date == date)
        #expect(donation.groupId == "trip")
        #expect(
            donation
                == Donation(
                    id: "d1", app: app, intent: "ViewForecastIntent", parameters: ["city": "berlin", "note": ""],
                    date: date,
                    groupId: "trip"))
    }

    /// Copies share their text; changing one field of a copy changes that copy only, and equality and hashing are
    /// by value (a donation rebuilt from its fields equals it), whoever shares what.
    @Test func copiesAreValues() throws {
        let original = Donation(
            id: "d1", app: app, intent: "ViewForecastIntent", parameters: ["city": "berlin"], date: date,
            groupId: "trip")
        var copy = original
        copy.id = "d2"
        copy.intent = "OpenIntent"
        copy.parameters["city"] = "paris"
        copy.groupId = nil
        copy.app = other
        copy.date = date.adding(seconds: 1)
        #expect(original.id == "d1" && original.intent == "ViewForecastIntent" && original.app == app)
        #expect(original.parameters == ["city": "berlin"] && original.groupId == "trip" && original.date == date)
        #expect(copy.id == "d2" && copy.intent == "OpenIntent" && copy.app == other)
        #expect(copy.parameters == ["city": "paris"] && copy.groupId == nil && copy.date == date.adding(seconds: 1))
        let rebuilt = Donation(
            id: "d1", app: app, intent: "ViewForecastIntent", parameters: ["city": "berlin"], date: date,
            groupId: "trip")
        #expect(rebuilt == original && rebuilt.hashValue == original.hashValue)
        #expect(Set([original, rebuilt, copy]).count == 2)
        var back = copy
        (back.id, back.intent, back.app, back.groupId, back.date) = ("d1", "ViewForecastIntent", app, "trip", date)
        back.parameters = ["city": "berlin"]
        #expect(back == original && back.hashValue == original.hashValue)
        #expect(original.withDate(date.adding(seconds: 5)) != original)
        #expect(original.withDate(date.adding(seconds: 5)).withDate(date) == original)
    }

    @Test func limitsAreInclusive() throws {
        let longest = String(repeating: "x", count: 255)
        var parameters: [String: String] = [:]
        for index in 0..<64 { parameters["p\(index)"] = index == 0 ? String(repeating: "v", count: 4096) : "v" }
        parameters["p1"] = nil
        parameters[String(repeating: "n", count: 4096)] = "v"
        let donation = try Donation.validated(
            id: longest, app: app, intent: longest, parameters: parameters, date: date, groupId: longest)
        #expect(donation.parameters.count == 64)
        let atBound = Dictionary(
            uniqueKeysWithValues: (0..<4).map { ("p\($0)", String(repeating: "v", count: 4_096 - 2)) })
        #expect(
            try Donation.validated(id: "d", app: app, intent: "I", parameters: atBound, date: date).parameters.count
                == 4)
    }

    @Test func invalidDonationsNameTheField() {
        #expect(throws: bad("id", "must not be empty")) {
            try Donation.validated(id: "", app: app, intent: "I", date: date)
        }
        #expect(throws: bad("id", "is 256 bytes; at most 255 allowed")) {
            try Donation.validated(id: String(repeating: "i", count: 256), app: app, intent: "I", date: date)
        }
        #expect(throws: bad("intent", "must not be empty")) {
            try Donation.validated(id: "d", app: app, intent: "", date: date)
        }
        #expect(throws: bad("intent", "is 300 bytes; at most 255 allowed")) {
            try Donation.validated(id: "d", app: app, intent: String(repeating: "i", count: 300), date: date)
        }
        #expect(throws: bad("groupId", "must not be empty")) {
            try Donation.validated(id: "d", app: app, intent: "I", date: date, groupId: "")
        }
        #expect(throws: bad("parameters.city", "longer than 4096 bytes")) {
            try Donation.validated(
                id: "d", app: app, intent: "I", parameters: ["a": "ok", "city": String(repeating: "c", count: 4097)],
                date: date)
        }
        #expect(throws: bad("parameters", "a parameter name must be 1–4096 bytes")) {
            try Donation.validated(id: "d", app: app, intent: "I", parameters: ["": "x"], date: date)
        }
        // Several bad: the first by name is named, whatever the dictionary's order.
        let long = String(repeating: "v", count: 4097)
        #expect(throws: bad("parameters.b", "longer than 4096 bytes")) {
            try Donation.validated(
                id: "d", app: app, intent: "I", parameters: ["z": long, "a": "ok", "b": long, "y": long], date: date)
        }
        #expect(throws: bad("parameters", "a parameter name must be 1–4096 bytes")) {
            try Donation.validated(
                id: "d", app: app, intent: "I", parameters: [String(repeating: "n", count: 4097): "x"], date: date)
        }
        // Each within its bound, but more than 16,384 bytes together.
        let large = Dictionary(uniqueKeysWithValues: (0..<5).map { ("p\($0)", String(repeating: "v", count: 4_000)) })
        #expect(throws: bad("parameters", "names and values are 20010 bytes in all; at most 16384")) {
            try Donation.validated(id: "d", app: app, intent: "I", parameters: large, date: date)
        }
        let many = Dictionary(uniqueKeysWithValues: (0..<65).map { ("p\($0)", "v") })
        #expect(throws: bad("parameters", "has 65 parameters; at most 64")) {
            try Donation.validated(id: "d", app: app, intent: "I", parameters: many, date: date)
        }
    }

    // MARK: Deletion filters

    private func sample() -> [Donation] {
        [
            Donation(
                id: "1", app: app, intent: "ViewForecastIntent", parameters: ["city": "berlin"], date: date,
                groupId: "trip"),
            Donation(id: "2", app: app, intent: "ViewForecastIntent", parameters: ["city": "paris"], date: date),
            Donation(
                id: "3", app: app, intent: "ShowMapIntent", parameters: ["place": "berlin"], date: date,
                groupId: "trip"),
            Donation(id: "4", app: app, intent: "ViewForecastIntent", date: date),
            Donation(
                id: "1", app: other, intent: "ViewForecastIntent", parameters: ["city": "berlin"], date: date,
                groupId: "trip"),
        ]
    }

    /// The indexes in `sample()` that `filter` selects for `app`.
    private func selected(_ filter: DonationFilter, for app: AppID? = nil) -> [Int] {
        sample().indices.filter { filter.matches(sample()[$0], app: app ?? self.app) }
    }

    @Test func filters() {
        #expect(selected(.ids(["1", "3", "9"])) == [0, 2])
        #expect(selected(.ids([])) == [])
        #expect(selected(.group("trip")) == [0, 2])
        #expect(selected(.group("other")) == [])
        #expect(selected(.intent(type: "ViewForecastIntent", entity: nil)) == [0, 1, 3])
        #expect(selected(.intent(type: "ViewForecastIntent", entity: "berlin")) == [0])
        #expect(selected(.intent(type: "ShowMapIntent", entity: "berlin")) == [2])
        #expect(selected(.intent(type: "ShowMapIntent", entity: "paris")) == [])
        #expect(selected(.intent(type: "berlin", entity: nil)) == [])
        #expect(selected(.all) == [0, 1, 2, 3])
    }

    @Test(arguments: [
        DonationFilter.ids(["1"]), .group("trip"), .intent(type: "ViewForecastIntent", entity: "berlin"), .all,
    ])
    func filtersStayWithinTheApp(filter: DonationFilter) {
        #expect(selected(filter, for: other) == [4])
    }
}
