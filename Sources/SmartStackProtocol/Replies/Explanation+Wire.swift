public import SmartStackCore

extension StackExplanation {
    /// The `Explain` reply.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 11)
        object["stack"] = .string(decision.stack.rawValue)
        object["revision"] = .int(Int64(decision.revision))
        object["date"] = decision.time.wireValue
        object["order"] = .array(decision.entries.map { .object($0.wireObject) })
        object["smartRotate"] = .bool(smartRotate)
        object["suggestions"] = .bool(suggestions)
        object["developerMode"] = .bool(developerMode)
        object["lastRotation"] = lastRotation.wireValue
        object["nextRotationAllowed"] = nextRotationAllowed.wireValue
        object["learnedFromLooks"] = .int(Int64(learnedFromLooks))
        object["widgets"] = .array(widgets.map { .object($0.wireObject) })
        return object
    }
}

extension WidgetExplanation {
    /// One widget of the `Explain` reply.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 21)
        object["instance"] = .string(instance.rawValue)
        object["app"] = .string(kind.app.rawValue)
        object["kind"] = .string(kind.kind)
        object["position"] = .int(Int64(position))
        object["reason"] = .string(reason.rawValue)
        object["score"] = .double(score)
        object["behaviour"] = .double(behaviour)
        object["relevance"] = .double(relevance)
        object["contributions"] = .object(contributions.wireObject)
        object["relevanceState"] = .object(relevanceState.wireObject)
        object["relevantContext"] = relevantContext.map { .int(Int64($0)) } ?? .null
        object["relevanceGroup"] = relevanceGroup.map(JSONValue.string) ?? .null
        object["suppressedByGroup"] = .bool(suppressedByGroup)
        object["rotationLimited"] = .bool(rotationLimited)
        object["rotationsToday"] = .int(Int64(rotationsToday))
        object["rotationsLeftToday"] = .int(Int64(rotationsLeftToday))
        object["timeOnTop"] = timeOnTop.map(JSONValue.double) ?? .null
        object["pinned"] = .bool(pinned)
        object["manualSwipeUntil"] = manualSwipeUntil.wireValue
        object["budget"] = .object(budget.wireObject)
        object["nextReload"] = nextReload.wireValue
        return object
    }
}

extension RelevanceState {
    /// `{status, score, normalized, since?, expires?, currentEntryDate?}`.
    public var wireObject: JSONObject {
        [
            "status": .string(status.rawValue), "score": .double(score), "normalized": .double(normalized),
            "since": since.wireValue, "expires": expires.wireValue, "currentEntryDate": currentEntryDate.wireValue,
        ]
    }
}

extension BudgetState {
    /// The `GetBudget` reply: `{capacity, used, left, nextAvailable}`; `nextAvailable` is `null` when the budget
    /// never frees up.
    public var wireObject: JSONObject {
        [
            "capacity": .int(Int64(capacity)), "used": .int(Int64(used)), "left": .int(Int64(left)),
            "nextAvailable": nextAvailable.wireValue,
        ]
    }
}
