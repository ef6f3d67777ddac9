#include "xml_check.hpp"

#include <cctype>
#include <cstdint>
#include <stdexcept>

namespace fp8scope::cli_test {

std::string XmlElement::attribute(std::string_view attribute_name) const
{
    for (const auto& [key, value] : attributes)
        if (key == attribute_name)
            return value;
    return {};
}

std::vector<const XmlElement*> XmlElement::descendants(std::string_view element_name) const
{
    std::vector<const XmlElement*> found;
    for (const XmlElement& child : children) {
        if (child.name == element_name)
            found.push_back(&child);
        for (const XmlElement* below : child.descendants(element_name))
            found.push_back(below);
    }
    return found;
}

namespace {

struct ParseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Reader {
public:
    explicit Reader(std::string_view text)
        : text_(text)
    {
    }

    XmlElement document()
    {
        skip_misc();
        if (!starts_with("<"))
            fail("no root element");
        XmlElement root = element();
        skip_misc();
        if (at_ < text_.size())
            fail("content after the root element");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& why) const
    {
        throw ParseError("at byte " + std::to_string(at_) + ": " + why);
    }
    bool starts_with(std::string_view prefix) const { return text_.substr(at_).starts_with(prefix); }
    void skip_space()
    {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
            ++at_;
    }
    void skip_past(std::string_view end)
    {
        const size_t found = text_.find(end, at_);
        if (found == std::string_view::npos)
            fail("unterminated " + std::string(end));
        at_ = found + end.size();
    }
    // Whitespace, comments, the XML declaration and a DOCTYPE.
    void skip_misc()
    {
        for (skip_space(); starts_with("<?") || starts_with("<!--") || starts_with("<!DOCTYPE"); skip_space())
            skip_past(starts_with("<?") ? "?>" : starts_with("<!--") ? "-->" : ">");
    }
    std::string name()
    {
        const size_t start = at_;
        while (at_ < text_.size()
            && (std::isalnum(static_cast<unsigned char>(text_[at_]))
                || std::string_view("_:.-").find(text_[at_]) != std::string_view::npos))
            ++at_;
        if (at_ == start)
            fail("expected a name");
        return std::string(text_.substr(start, at_ - start));
    }
    // Character data up to `stop`, entities decoded; a raw '<' or a bare '&' is an error.
    std::string chars(char stop)
    {
        std::string out;
        while (at_ < text_.size() && text_[at_] != stop) {
            const char c = text_[at_];
            if (c == '<')
                fail("raw '<' in character data");
            if (c != '&') {
                out += c;
                ++at_;
                continue;
            }
            const size_t end = text_.find(';', at_);
            if (end == std::string_view::npos || end - at_ > 10)
                fail("bare '&'");
            out += entity(text_.substr(at_ + 1, end - at_ - 1));
            at_ = end + 1;
        }
        return out;
    }
    std::string entity(std::string_view name) const
    {
        if (name == "amp")
            return "&";
        if (name == "lt")
            return "<";
        if (name == "gt")
            return ">";
        if (name == "quot")
            return "\"";
        if (name == "apos")
            return "'";
        if (name.size() > 1 && name[0] == '#') {
            const bool hex = name[1] == 'x';
            const std::string digits(name.substr(hex ? 2 : 1));
            const unsigned long code = std::stoul(digits, nullptr, hex ? 16 : 10);
            if (code < 0x80)
                return std::string(1, static_cast<char>(code));
            return "?"; // the tests only look at ASCII references
        }
        fail("unknown entity &" + std::string(name) + ";");
    }
    XmlElement element()
    {
        ++at_; // '<'
        XmlElement e;
        e.name = name();
        for (;;) {
            skip_space();
            if (starts_with("/>")) {
                at_ += 2;
                return e;
            }
            if (starts_with(">")) {
                ++at_;
                break;
            }
            std::string attribute_name = name();
            skip_space();
            if (!starts_with("="))
                fail("attribute " + attribute_name + " without a value");
            ++at_;
            skip_space();
            if (!starts_with("\"") && !starts_with("'"))
                fail("unquoted attribute " + attribute_name);
            const char quote = text_[at_++];
            std::string value = chars(quote);
            if (at_ >= text_.size())
                fail("unterminated attribute " + attribute_name);
            ++at_;
            e.attributes.emplace_back(std::move(attribute_name), std::move(value));
        }
        for (;;) {
            e.text += chars('<');
            if (at_ >= text_.size())
                fail("<" + e.name + "> is not closed");
            if (starts_with("<!--")) {
                skip_past("-->");
            } else if (starts_with("</")) {
                at_ += 2;
                const std::string closing = name();
                if (closing != e.name)
                    fail("</" + closing + "> closes <" + e.name + ">");
                skip_space();
                if (!starts_with(">"))
                    fail("malformed end tag");
                ++at_;
                return e;
            } else {
                e.children.push_back(element());
            }
        }
    }

    std::string_view text_;
    size_t at_ = 0;
};

} // namespace

XmlDocument parse_xml(std::string_view text)
{
    XmlDocument doc;
    try {
        doc.root = Reader(text).document();
        doc.ok = true;
    } catch (const std::exception& e) {
        doc.error = e.what();
    }
    return doc;
}

} // namespace fp8scope::cli_test
