extension VarlinkIDL.Interface {
    /// The first way `parameters` breaks the input of method `method`, or `nil` when they conform.
    public func validateInput(of method: String, _ parameters: JSONObject) -> String? {
        guard let definition = self.method(named: method) else { return "no method \(name).\(method)" }
        return validate(parameters, against: definition.input, path: "")
    }

    /// The first way `parameters` breaks the reply of method `method`, or `nil` when they conform.
    public func validateOutput(of method: String, _ parameters: JSONObject) -> String? {
        guard let definition = self.method(named: method) else { return "no method \(name).\(method)" }
        return validate(parameters, against: definition.output, path: "")
    }

    /// The first way `parameters` breaks the error `error`, or `nil` when they conform.
    public func validateError(named error: String, _ parameters: JSONObject) -> String? {
        guard let definition = self.error(named: error) else { return "no error \(name).\(error)" }
        return validate(parameters, against: definition.fields, path: "")
    }

    /// Checks an object against struct fields: every non-optional field present and not `null`, every value
    /// of its field's type, no members the struct does not declare. `int` must be an integer; `float` may be
    /// any number; `object` any JSON object.
    public func validate(_ object: JSONObject, against fields: [VarlinkIDL.Field], path: String) -> String? {
        for (key, _) in object where !fields.contains(where: { $0.name == key }) {
            return "\(join(path, key)): not declared"
        }
        for field in fields {
            let fieldPath = join(path, field.name)
            let value = object[field.name] ?? .null
            if let problem = validate(value, against: field.type, path: fieldPath) { return problem }
        }
        return nil
    }

    /// Checks one value against a type expression.
    public func validate(_ value: JSONValue, against type: VarlinkIDL.TypeExpression, path: String) -> String? {
        func mismatch(_ expected: String) -> String { "\(path): expected \(expected), got \(value.typeName)" }
        switch type {
        case .optional(let inner):
            return value.isNull ? nil : validate(value, against: inner, path: path)
        case _ where value.isNull:
            return "\(path): required"
        case .bool:
            return value.boolValue == nil ? mismatch("bool") : nil
        case .int:
            return value.intValue == nil ? mismatch("int") : nil
        case .float:
            return value.doubleValue == nil ? mismatch("float") : nil
        case .string:
            return value.stringValue == nil ? mismatch("string") : nil
        case .object:
            return value.objectValue == nil ? mismatch("object") : nil
        case .named(let name):
            guard let definition = self.type(named: name) else { return "\(path): no type \(name)" }
            return validate(value, against: definition.type, path: path)
        case .array(let element):
            guard let array = value.arrayValue else { return mismatch("array") }
            for (offset, item) in array.enumerated() {
                if let problem = validate(item, against: element, path: "\(path)[\(offset)]") { return problem }
            }
            return nil
        case .map(let element):
            guard let object = value.objectValue else { return mismatch("map") }
            for (key, item) in object {
                if let problem = validate(item, against: element, path: join(path, key)) { return problem }
            }
            return nil
        case .stringSet:
            guard let object = value.objectValue else { return mismatch("set") }
            for (key, item) in object where item.objectValue?.isEmpty != true {
                return "\(join(path, key)): a set member's value must be {}"
            }
            return nil
        case .structure(let fields):
            guard let object = value.objectValue else { return mismatch("struct") }
            return validate(object, against: fields, path: path)
        case .enumeration(let values):
            guard let text = value.stringValue else { return mismatch("enum string") }
            return values.contains { $0.name == text } ? nil : "\(path): '\(text)' is not one of the enum's values"
        }
    }

    private func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
