"""Tests for mcpkit.server.uri_template: RFC 6570 expansion, matching URIs back, and malformed templates."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.server.uri_template import TemplateError, UriTemplate

# RFC 6570 section 3.2, the variables every example in sections 1.2 and 3.2 expands.
RFC_VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# RFC 6570 section 1.2, levels 1 to 4.
LEVEL_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# RFC 6570 sections 3.2.1 to 3.2.9.
SECTION_3_2_EXAMPLES = [
    # 3.2.1 Variable Expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 Simple String Expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 Reserved Expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 Fragment Expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 Label Expansion with Dot-Prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 Path Segment Expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 Path-Style Parameter Expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 Form-Style Query Expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 Form-Style Query Continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


# --- expansion ---


@pytest.mark.parametrize(("template", "expected"), LEVEL_EXAMPLES)
def test_level_examples_from_rfc_section_1_2_expand_as_the_rfc_says(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


@pytest.mark.parametrize(("template", "expected"), SECTION_3_2_EXAMPLES)
def test_operator_examples_from_rfc_section_3_2_expand_as_the_rfc_says(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_numbers_expand_as_their_decimal_text() -> None:
    assert (
        UriTemplate("api://items{?page,ratio}").expand({"page": 2, "ratio": 0.5})
        == "api://items?page=2&ratio=0.5"
    )


def test_a_missing_variable_expands_to_nothing() -> None:
    assert UriTemplate("api://items/{id}{?page}").expand({}) == "api://items/"


def test_reserved_expansion_keeps_pct_encoded_triplets_and_prefix_never_splits_them() -> None:
    template = UriTemplate("{+path:2}-{+path}")
    assert template.expand({"path": "%E2x"}) == "%E2x-%E2x"


def test_non_ascii_values_are_utf8_pct_encoded() -> None:
    assert UriTemplate("{word}").expand({"word": "café"}) == "caf%C3%A9"


def test_literals_that_are_not_allowed_in_a_uri_are_pct_encoded() -> None:
    assert UriTemplate("a b/{x}").expand({"x": "1"}) == "a%20b/1"


def test_none_members_of_lists_and_maps_are_skipped() -> None:
    template = UriTemplate("{?list*,keys*}")
    assert template.expand({"list": ["a", None], "keys": {"k": None, "j": "1"}}) == "?list=a&j=1"


# --- parsing and the value object ---


def test_variables_lists_each_name_once_in_template_order() -> None:
    assert UriTemplate("{b}/{a,b}{?c*}{&d:3}").variables == ("b", "a", "c", "d")


def test_templates_are_equal_and_hash_alike_when_their_text_is_the_same() -> None:
    assert UriTemplate("a://{x}") == UriTemplate("a://{x}")
    assert UriTemplate("a://{x}") != UriTemplate("a://{y}")
    assert hash(UriTemplate("a://{x}")) == hash(UriTemplate("a://{x}"))
    assert UriTemplate("a://{x}") != "a://{x}"


def test_str_is_the_template_and_repr_shows_it() -> None:
    template = UriTemplate("file:///{+path}")
    assert str(template) == "file:///{+path}"
    assert repr(template) == "UriTemplate('file:///{+path}')"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("commerce://products/{sku}", True),
        ("api://items{?page}", True),
        ("file:///readme.md", False),
        ("{}", False),
    ],
)
def test_is_template_tells_whether_text_contains_an_expression(text: str, expected: bool) -> None:
    assert UriTemplate.is_template(text) is expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("commerce://{sku", "unclosed"),
        ("commerce://{a{b}}", "unclosed"),
        ("commerce://sku}", "unmatched"),
        ("{}", "empty"),
        ("{=x}", "reserved operator"),
        ("{,x}", "reserved operator"),
        ("{!x}", "reserved operator"),
        ("{@x}", "reserved operator"),
        ("{|x}", "reserved operator"),
        ("{$x}", "unknown operator"),
        ("{-x}", "unknown operator"),
        ("{a-b}", "invalid variable name"),
        ("{a..b}", "invalid variable name"),
        ("{.a.}", "invalid variable name"),
        ("{x,}", "invalid variable name"),
        ("{+}", "invalid variable name"),
        ("{%zz}", "unknown operator"),
        ("{x:0}", "bad modifier"),
        ("{x:10000}", "bad modifier"),
        ("{x:}", "bad modifier"),
        ("{x:a}", "bad modifier"),
        ("{x:3*}", "bad modifier"),
        ("{x*:3}", "bad modifier"),
        ("{x**}", "bad modifier"),
    ],
)
def test_malformed_templates_raise_template_error(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        UriTemplate(template)


def test_template_error_is_a_value_error() -> None:
    assert issubclass(TemplateError, ValueError)


def test_templates_longer_than_2048_characters_are_rejected() -> None:
    UriTemplate("a" * 2048)
    with pytest.raises(TemplateError, match="longer than 2048"):
        UriTemplate("a" * 2049)


def test_templates_with_more_than_64_expressions_are_rejected() -> None:
    UriTemplate("{x}" * 64)
    with pytest.raises(TemplateError, match="more than 64"):
        UriTemplate("{x}" * 65)


def test_percent_encoded_variable_names_are_accepted() -> None:
    assert UriTemplate("{a%2Eb,c.d}").variables == ("a%2Eb", "c.d")


# --- matching ---


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("commerce://products/{sku}", "commerce://products/ABC-123", {"sku": "ABC-123"}),
        ("commerce://products/{sku}", "commerce://products/", {"sku": ""}),
        ("file:///{+path}", "file:///docs/guide/intro.md", {"path": "docs/guide/intro.md"}),
        ("docs://{#section}", "docs://#a/b", {"section": "a/b"}),
        ("repo://tree{/path*}", "repo://tree/src/mcpkit/server", {"path": ["src", "mcpkit", "server"]}),
        ("repo://tree{/owner,name}/info", "repo://tree/bob/notes/info", {"owner": "bob", "name": "notes"}),
        ("repo://tree{/owner,name}/info", "repo://tree/alice/info", {"owner": "alice"}),
        ("file://report{.ext}", "file://report.pdf", {"ext": "pdf"}),
        ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
        ("map{;x,y}", "map;x=1024;y=768", {"x": "1024", "y": "768"}),
        ("map{;x,y}", "map;y=768", {"y": "768"}),
        ("map{;x,empty}", "map;x=1;empty", {"x": "1", "empty": ""}),
        ("map{;list*}", "map;list=red;list=green", {"list": ["red", "green"]}),
        ("geo://point/{x,y}", "geo://point/1024,768", {"x": "1024", "y": "768"}),
        ("notes://{name}.txt", "notes://draft.v2.txt", {"name": "draft.v2"}),
        ("here?ref={+path}", "here?ref=/foo/bar", {"path": "/foo/bar"}),
        ("{/who}{/dub}", "/fred/me%2Ftoo", {"who": "fred", "dub": "me/too"}),
        ("{/var}/here", "/here", {}),
        ("{/var:1,var}", "/v/value", {"var": "value"}),
        ("{x}/{x}", "same/same", {"x": "same"}),
    ],
)
def test_match_extracts_the_variables_of_a_concrete_uri(
    template: str, uri: str, expected: dict[str, Any]
) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("commerce://products/{sku}", "commerce://products/a/b"),
        ("commerce://products/{sku}", "commerce://products/a?b"),
        ("commerce://products/{sku}", "commerce://products/a#b"),
        ("commerce://products/{sku}", "commerce://product/a"),
        ("commerce://products/{sku}", "other://products/a"),
        ("commerce://products/{sku}/reviews", "commerce://products/a"),
        ("geo://{lat}", "geo://1,2"),
        ("file://{+path}.md", "file://a/b.txt"),
        ("{x}/{x}", "one/two"),
        ("api://items{?q:3}", "api://items?q=abcd"),
        ("api://items?fixed=yes{&x}", "api://items?fixed=no&x=1"),
        ("api://items?fixed=yes{&x}", "api://items?x=1"),
        ("api://items{?page}", "api://items?page=1#top"),
        ("map{;x}", "map;xy=1"),
    ],
)
def test_match_returns_none_for_a_uri_the_template_cannot_produce(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


def test_query_parameters_match_in_any_order() -> None:
    template = UriTemplate("api://items{?page,limit}")
    assert template.match("api://items?limit=10&page=2") == {"page": "2", "limit": "10"}
    assert template.match("api://items?page=2&limit=10") == {"page": "2", "limit": "10"}


def test_query_parameters_may_be_absent_or_partly_present() -> None:
    template = UriTemplate("api://items{?page,limit}")
    assert template.match("api://items") == {}
    assert template.match("api://items?") == {}
    assert template.match("api://items?limit=10") == {"limit": "10"}


def test_unknown_query_parameters_are_ignored() -> None:
    template = UriTemplate("api://items{?page}")
    assert template.match("api://items?sort=asc&page=3&debug") == {"page": "3"}


def test_query_continuations_and_fixed_query_literals_match_in_any_order() -> None:
    assert UriTemplate("search{?q}{&page}").match("search?page=2&q=mcp") == {"q": "mcp", "page": "2"}
    fixed = UriTemplate("api://items?fixed=yes{&x}")
    assert fixed.match("api://items?x=1&fixed=yes") == {"x": "1"}


def test_exploded_query_variables_collect_every_occurrence() -> None:
    assert UriTemplate("api://items{?tag*}").match("api://items?tag=a&other=1&tag=b") == {"tag": ["a", "b"]}


def test_matched_values_are_percent_decoded() -> None:
    assert UriTemplate("commerce://products/{sku}").match("commerce://products/caf%C3%A9%20au%20lait") == {
        "sku": "café au lait"
    }
    assert UriTemplate("api://search{?q}").match("api://search?q=a%26b%3Dc%20d") == {"q": "a&b=c d"}
    assert UriTemplate("repo://tree{/path*}").match("repo://tree/a%2Fb/c") == {"path": ["a/b", "c"]}


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("commerce://products/{sku}", {"sku": "ABC 123/ü?#,&"}),
        ("file:///{+path}", {"path": "docs/a b/c,d.md"}),
        ("api://items{?page,limit}", {"page": "2", "limit": "a&b=c"}),
        ("api://items?fixed=yes{&x}", {"x": "1"}),
        ("repo://tree{/path*}", {"path": ["src", "a b", ""]}),
        ("repo://tree{/owner,name}/info", {"owner": "alice", "name": "notes"}),
        ("www{.dom*}", {"dom": ["example", "com"]}),
        ("map{;x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
        ("geo://point/{x,y}", {"x": "10,5", "y": "768"}),
        ("{#path,x}/here", {"path": "/foo/bar", "x": "1024"}),
        ("{+path}/here", {"path": "/foo/bar"}),
        ("api://items{?tag*}{&page}", {"tag": ["a", "b"], "page": "3"}),
    ],
)
def test_expanding_then_matching_gives_the_values_back(template: str, values: dict[str, Any]) -> None:
    parsed = UriTemplate(template)
    assert parsed.match(parsed.expand(values)) == values


@given(st.text())
def test_any_simple_value_survives_expand_then_match(sku: str) -> None:
    template = UriTemplate("commerce://products/{sku}")
    assert template.match(template.expand({"sku": sku})) == {"sku": sku}


@given(st.text(), st.text())
def test_any_pair_of_simple_values_survives_expand_then_match(store: str, sku: str) -> None:
    template = UriTemplate("shop://{store}/items/{sku}{?q}")
    assert template.match(template.expand({"store": store, "sku": sku, "q": sku})) == {
        "store": store,
        "sku": sku,
        "q": sku,
    }


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="%")))
def test_any_reserved_value_without_percent_survives_expand_then_match(path: str) -> None:
    template = UriTemplate("file:///{+path}")
    assert template.match(template.expand({"path": path})) == {"path": path}


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="%,")), st.text())
def test_reserved_and_simple_values_together_survive_expand_then_match(path: str, owner: str) -> None:
    template = UriTemplate("repo://{owner}/{+path}")
    assert template.match(template.expand({"owner": owner, "path": path})) == {"owner": owner, "path": path}


@given(st.lists(st.text(), min_size=1))
def test_any_list_of_path_segments_survives_expand_then_match(segments: list[str]) -> None:
    template = UriTemplate("repo://tree{/path*}")
    assert template.match(template.expand({"path": segments})) == {"path": segments}


@pytest.mark.parametrize(
    "template",
    [
        "{a}{b}{c}{d}{e}",
        "{a}.{b}.{c}.{d}.{e}/x",
        "{+a}/{+b}/{+c}/{+d}/end",
        "x{/a,b,c,d,e,f}{.g*}{;h,i}{#j,k}",
        "{a}-{b}-{c}-{d}-{e}{?p,q}",
        "{/list*}/{/more*}/{x}/y",
    ],
)
@pytest.mark.parametrize("character", ["a", ".", "/", "-", ",", ";"])
def test_a_long_run_of_one_character_against_many_variables_completes(template: str, character: str) -> None:
    result = UriTemplate(template).match(character * 20_000 + "!")
    assert result is None or isinstance(result, dict)
