// A small strict XML reader for the tests of fp8scope's XML and HTML outputs (JUnit, the HTML report, which is
// written as well-formed XML): it rejects what a strict parser rejects (unbalanced or mismatched tags, a raw '<' or
// '&' in text or attributes, unknown entities, unquoted attributes, content after the root) and gives back the
// element tree, so that tests can count and inspect elements.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp8scope::cli_test {

struct XmlElement {
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes; // values with entities decoded
    std::vector<XmlElement> children;
    std::string text; // the element's own character data, entities decoded, children's text not included

    // The attribute's value, or "" when it is absent.
    std::string attribute(std::string_view attribute_name) const;
    // This element's descendants (not itself) named `element_name`, in document order.
    std::vector<const XmlElement*> descendants(std::string_view element_name) const;
};

struct XmlDocument {
    bool ok = false;
    std::string error; // where and why parsing stopped, when !ok
    XmlElement root;
};

// Accepts an optional XML declaration, a DOCTYPE and comments before the root element.
XmlDocument parse_xml(std::string_view text);

} // namespace fp8scope::cli_test
