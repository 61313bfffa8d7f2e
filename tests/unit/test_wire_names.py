"""Wire names: the provider-safe codec and per-catalog assignment (reference doc 09, "Wire names").

Requirements: AS-ID-002 (codec, shortening, per-instance names), AS-ID-004 (codec properties),
AS-WIRE-004 (64-character budget), AS-WIRE-005 (deterministic, order-independent),
AS-WIRE-006 (unique within a catalog), AS-WIRE-007 (the map round-trips; decode never answers a
wrong id). AS-WIRE-001..003 are intentionally unassigned in the reference manifest.

The golden names below were produced by the TypeScript implementation's codec; matching them
pins the hash (FNV-1a over UTF-16 code units, base 36) and the shortening layout exactly.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentsurface._core.errors import DefinitionError
from agentsurface.wire_names import (
    MAX_WIRE_NAME_LENGTH,
    WireNameEntry,
    _hash36,
    assign_wire_names,
    decode_wire_name,
    encode_capability_id,
    encode_wire_name,
    is_wire_name,
)

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
WEBMCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")

PROPERTY = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

DEEP_ID = "view:billing.invoices.table.filters.setSelectedRange"
LONG_ID = "view:verylongsegment.verylongsegment.verylongsegment.verylongsegment.tail.someCapabilityName"
# A genuine 32-bit hash collision with the same kept prefix: both ids shorten to the same name.
COLLIDING = (
    "view:aaaaaaaaaa.bbbbbbbbbb.cccccccccc.dddddddddd.eeeeeeeeee.cap8596",
    "view:aaaaaaaaaa.bbbbbbbbbb.cccccccccc.dddddddddd.eeeeeeeeee.cap2709660",
)


def _raw(capability_id: str) -> str:
    return capability_id.replace(":", "_", 1).replace(".", "__")


# ----------------------------------------------------------------------------- strategies

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"
_UPPER = _LOWER.upper()


def _word(tail_alphabet: str, max_tail: int) -> st.SearchStrategy[str]:
    """A lowercase letter followed by up to ``max_tail`` characters of ``tail_alphabet``."""
    return st.builds(str.__add__, st.sampled_from(_LOWER), st.text(alphabet=tail_alphabet, max_size=max_tail))


_segment = _word(_LOWER + _DIGITS + "-", 13)
_cap_name = _word(_LOWER + _UPPER + _DIGITS, 14)
_domain_tail = _word(_LOWER + _UPPER + _DIGITS + "-", 11)

view_ids = st.builds(
    lambda segs, name: f"view:{'.'.join(segs)}.{name}",
    st.lists(_segment, min_size=1, max_size=6),
    _cap_name,
).filter(lambda s: len(s) <= 128)
domain_ids = st.builds(
    lambda first, rest: "domain:" + ".".join([first, *rest]),
    _segment,
    st.lists(_domain_tail, min_size=1, max_size=5),
).filter(lambda s: len(s) <= 128)
capability_ids = st.one_of(view_ids, domain_ids)
instance_ids = st.one_of(
    st.sampled_from(["main", "comparison", "row_2-b", "at", "0", "_", "x_0_1"]),
    st.text(alphabet=_LOWER + _UPPER + _DIGITS + "_-", min_size=1, max_size=40),
)


@st.composite
def catalogs(draw: st.DrawFn) -> list[WireNameEntry]:
    """Catalogs rich in collisions: a small id pool, shared qualifiers, unflagged repeats."""
    pool = draw(st.lists(capability_ids, min_size=1, max_size=4, unique=True))
    pool += [COLLIDING[0], COLLIDING[1]] if draw(st.booleans()) else []
    raw_entries = draw(
        st.lists(
            st.tuples(
                st.sampled_from(pool),
                st.one_of(st.none(), st.sampled_from(["main", "comparison", "default"]), instance_ids),
                st.one_of(st.none(), st.sampled_from(["reg_1", "reg_2", "reg_3"])),
                st.booleans(),
            ),
            max_size=14,
        )
    )
    entries = [
        WireNameEntry(cap, inst, reg, repeated=repeated and inst is not None)
        for cap, inst, reg, repeated in raw_entries
    ]
    return list(dict.fromkeys(entries))


# ----------------------------------------------------------------------------- AS-ID-002


class TestCodec:
    def test_AS_ID_002_docs_examples_encode_and_decode(self) -> None:
        assert encode_capability_id("view:devices.table.selectRows") == "view_devices__table__selectRows"
        assert encode_capability_id("domain:devices.disable") == "domain_devices__disable"
        assert decode_wire_name("view_devices__table__selectRows") == "view:devices.table.selectRows"
        assert decode_wire_name("domain_devices__disable") == "domain:devices.disable"

    @pytest.mark.parametrize(
        "capability_id",
        ["view:app.navigation.goTo", "view:x-ray.sub-panel.readState", "view:a1.b2.c3", "domain:a.b-c.dE"],
    )
    def test_AS_ID_002_hyphens_and_digits_round_trip(self, capability_id: str) -> None:
        name = encode_capability_id(capability_id)
        assert PROVIDER_NAME.fullmatch(name)
        assert decode_wire_name(name) == capability_id

    def test_AS_ID_002_repeated_instances_append_the_instance_id_verbatim(self) -> None:
        assert encode_wire_name("view:devices.table.readState", "main") == (
            "view_devices__table__readState_at_main"
        )
        # Instance ids are already in the provider alphabet: "_" and "-" pass through unchanged.
        assert encode_wire_name("view:devices.table.readState", "row_2-b") == (
            "view_devices__table__readState_at_row_2-b"
        )
        assert encode_wire_name("view:devices.table.readState") == "view_devices__table__readState"

    def test_AS_ID_002_long_names_keep_54_chars_then_marker_then_7_char_hash(self) -> None:
        name = encode_capability_id(LONG_ID)
        assert name == "view_verylongsegment__verylongsegment__verylongsegment_0_17kbcl7"
        assert len(name) == 64
        assert name[:54] == _raw(LONG_ID)[:54]
        assert name[54:57] == "_0_"
        assert encode_capability_id(LONG_ID + "X") != name
        assert decode_wire_name(name) is None

    def test_AS_ID_002_names_match_the_typescript_codec(self) -> None:
        assert encode_capability_id(
            "domain:billing.invoices.reconcileOutstandingBalancesForCustomerAccount"
        ) == ("domain_billing__invoices__reconcileOutstandingBalances_0_05tfgkn")
        assert encode_wire_name("view:" + "seg." * 14 + "x.cap", "main") == (
            "view_seg__seg__seg__seg__seg__seg__seg__seg__seg__seg__0_1q6g05n"
        )
        assert [encode_wire_name(DEEP_ID, "comparison", level=level) for level in range(5)] == [
            "view_billing__invoices__table__filters__setSelectedRan_0_0r4urm9",
            "view_billing__invoices__table__filters__setSelectedR_0_0quv5xa1h",
            "view_billing__invoices__table__filters__setSelecte_0_0qkvk8b1gcw",
            "view_billing__invoices__table__filters__setSelec_0_0qavyjc1gmvz2",
            "view_billing__invoices__table__filters__setSel_0_0s8t6e51fsx5za0",
        ]

    def test_AS_ID_002_an_escalated_short_name_is_hashed_too(self) -> None:
        assert encode_wire_name("view:devices.table.readState", level=1) == (
            "view_devices__table__readState_0_009490d0r"
        )

    def test_AS_ID_002_hash_is_fnv1a_base36_reseeded_per_round(self) -> None:
        # The empty input hashes to the FNV offset basis itself, padded to 7 base-36 characters.
        assert _hash36("", 7) == "0ztntfp"
        assert _hash36("view:devices.table.readState#main#0", 20) == "1jjmk4n0hzjqj80sh5qm"

    def test_AS_ID_002_instance_qualification_is_hashed_apart(self) -> None:
        long_id = "view:" + "seg." * 14 + "x.cap"
        main, comparison = encode_wire_name(long_id, "main"), encode_wire_name(long_id, "comparison")
        assert main != comparison
        assert len(main) <= 64 and len(comparison) <= 64

    @pytest.mark.parametrize(
        "bad_id",
        [
            "",
            "devices.table.x",
            "view:devices_table.x",
            "view:Devices.x",
            "other:a.b",
            "view:a",
            "domain:",
            "domain:a b",
        ],
    )
    def test_AS_ID_002_ids_outside_the_grammar_are_refused(self, bad_id: str) -> None:
        with pytest.raises(DefinitionError):
            encode_capability_id(bad_id)

    @pytest.mark.parametrize("bad_instance", ["", "a b", "a.b", "x" * 129])
    def test_AS_ID_002_instance_ids_outside_the_grammar_are_refused(self, bad_instance: str) -> None:
        with pytest.raises(DefinitionError):
            encode_wire_name("view:devices.table.readState", bad_instance)

    @pytest.mark.parametrize("level", [-1, 9])
    def test_AS_ID_002_levels_outside_the_supported_range_are_refused(self, level: int) -> None:
        with pytest.raises(ValueError):
            encode_wire_name(DEEP_ID, level=level)


# ----------------------------------------------------------------------------- AS-ID-004


@PROPERTY
@given(capability_ids)
def test_AS_ID_004_codec_stays_in_budget_and_round_trips_plain_names(capability_id: str) -> None:
    name = encode_capability_id(capability_id)
    assert PROVIDER_NAME.fullmatch(name)
    assert WEBMCP_NAME.fullmatch(name)
    if len(_raw(capability_id)) <= MAX_WIRE_NAME_LENGTH:
        assert name == _raw(capability_id)
        assert decode_wire_name(name) == capability_id
    else:
        assert len(name) == MAX_WIRE_NAME_LENGTH
        assert decode_wire_name(name) is None


@PROPERTY
@given(capability_ids, instance_ids, st.integers(min_value=0, max_value=8))
def test_AS_ID_004_every_level_and_qualifier_stays_in_the_alphabet(
    capability_id: str, instance_id: str, level: int
) -> None:
    name = encode_wire_name(capability_id, instance_id, level=level)
    assert PROVIDER_NAME.fullmatch(name)
    assert is_wire_name(name)
    assert decode_wire_name(name) is None


@pytest.mark.parametrize(
    "capability_id", ["view:at.a.a", "view:devices.at.readState", "view:at.at.at", "domain:at.a0"]
)
def test_AS_ID_004_segments_that_spell_a_marker_still_decode(capability_id: str) -> None:
    assert decode_wire_name(encode_capability_id(capability_id)) == capability_id


# ----------------------------------------------------------------------------- AS-WIRE-004


class TestBudget:
    def test_AS_WIRE_004_a_deep_id_fits_plain_and_shortens_when_qualified(self) -> None:
        assert len(_raw(DEEP_ID) + "_at_comparison") > 64
        assert encode_capability_id(DEEP_ID) == _raw(DEEP_ID)
        assert len(encode_wire_name(DEEP_ID, "comparison")) == 64

    def test_AS_WIRE_004_the_longest_ids_fit_at_every_level(self) -> None:
        longest = "view:" + "a." * 55 + "b" * 6
        assert len(longest) <= 128
        for level in range(9):
            name = encode_wire_name(longest, "i" * 128, level=level)
            assert len(name) == 64 and is_wire_name(name)

    def test_AS_WIRE_004_is_wire_name_enforces_the_provider_rule(self) -> None:
        assert is_wire_name("view_a__b")
        assert not is_wire_name("")
        assert not is_wire_name("x" * 65)
        assert not is_wire_name("view:a.b")
        assert not is_wire_name(None)

    @PROPERTY
    @given(catalogs())
    def test_AS_WIRE_004_every_emitted_name_fits_the_provider_and_webmcp_rules(
        self, entries: list[WireNameEntry]
    ) -> None:
        for name in assign_wire_names(entries).names:
            assert PROVIDER_NAME.fullmatch(name), name
            assert WEBMCP_NAME.fullmatch(name), name


# ----------------------------------------------------------------------------- AS-WIRE-005


class TestDeterminism:
    def test_AS_WIRE_005_a_catalog_gets_the_typescript_names(self) -> None:
        catalog = assign_wire_names(
            [
                WireNameEntry(DEEP_ID, "main", repeated=True),
                WireNameEntry(DEEP_ID, "comparison", repeated=True),
                WireNameEntry("view:devices.table.readState"),
            ]
        )
        assert catalog.names == (
            "view_billing__invoices__table__filters__setSelectedRange_at_main",
            "view_billing__invoices__table__filters__setSelectedRan_0_0r4urm9",
            "view_devices__table__readState",
        )

    def test_AS_WIRE_005_unrepeated_entries_are_not_qualified(self) -> None:
        entry = WireNameEntry("view:devices.table.readState", "main", "reg_1")
        assert assign_wire_names([entry]).names == ("view_devices__table__readState",)

    @PROPERTY
    @given(catalogs(), st.randoms(use_true_random=False))
    def test_AS_WIRE_005_names_depend_on_the_set_not_the_order(
        self, entries: list[WireNameEntry], rnd: random.Random
    ) -> None:
        shuffled = list(entries)
        rnd.shuffle(shuffled)
        forward = assign_wire_names(entries)
        reordered = assign_wire_names(shuffled)
        again = assign_wire_names(list(entries))
        assert dict(forward.wire_name_map()) == dict(reordered.wire_name_map())
        assert forward.names == again.names
        for entry in entries:
            assert forward.name_of(entry) == reordered.name_of(entry)


# ----------------------------------------------------------------------------- AS-WIRE-006


class TestUniqueness:
    def test_AS_WIRE_006_the_collision_is_real(self) -> None:
        assert encode_capability_id(COLLIDING[0]) == encode_capability_id(COLLIDING[1])

    def test_AS_WIRE_006_colliding_entries_are_re_encoded_with_a_longer_hash(self) -> None:
        bystander = WireNameEntry("view:devices.table.readState")
        catalog = assign_wire_names([WireNameEntry(COLLIDING[0]), WireNameEntry(COLLIDING[1]), bystander])
        assert catalog.names == (
            "view_aaaaaaaaaa__bbbbbbbbbb__cccccccccc__dddddddddd__0_0kzs21j0w",
            "view_aaaaaaaaaa__bbbbbbbbbb__cccccccccc__dddddddddd__0_0kzs21j11",
            "view_devices__table__readState",
        )
        assert catalog.resolve(catalog.names[0]) == WireNameEntry(COLLIDING[0])
        assert catalog.resolve(catalog.names[1]) == WireNameEntry(COLLIDING[1])

    def test_AS_WIRE_006_near_identical_deep_ids_stay_unique(self) -> None:
        entries = [WireNameEntry(f"view:{'deepsegment.' * 5}capability{i}") for i in range(200)]
        names = assign_wire_names(entries).names
        assert len(set(names)) == 200

    def test_AS_WIRE_006_same_qualifier_on_two_registrations_still_gives_two_names(self) -> None:
        # Two components of different types, both instance "default", each referencing the same
        # procedure: the qualified names are identical, so only the catalog check separates them.
        entries = [
            WireNameEntry("domain:devices.disable", "default", "reg_b", repeated=True),
            WireNameEntry("domain:devices.disable", "default", "reg_a", repeated=True),
        ]
        catalog = assign_wire_names(entries)
        assert len(set(catalog.names)) == 2
        # Both escalate to the level-3 hash, then take their rank among the sorted entries, so
        # reg_a gets rank 0 whichever order they come in.
        assert catalog.name_of(entries[1]) == "domain_devices__disable_at_default_0_04kfq2e1tgjob_0_0"
        assert catalog.name_of(entries[0]) == "domain_devices__disable_at_default_0_04kfq2e1tgjob_0_1"
        assert catalog.resolve(catalog.name_of(entries[1])) == entries[1]

    def test_AS_WIRE_006_a_crafted_instance_id_cannot_steal_a_tie_break_name(self) -> None:
        twins = [
            WireNameEntry("view:a.b", "x", "reg_1", repeated=True),
            WireNameEntry("view:a.b", "x", "reg_2", repeated=True),
        ]
        tie_break = encode_wire_name("view:a.b", "x", level=3) + "_0_0"
        crafted_instance = tie_break.removeprefix("view_a__b_at_")
        impostor = WireNameEntry("view:a.b", crafted_instance, "reg_3", repeated=True)
        assert encode_wire_name("view:a.b", crafted_instance) == tie_break
        catalog = assign_wire_names([*twins, impostor])
        assert len(set(catalog.names)) == 3
        assert {catalog.resolve(name) for name in catalog.names} == {*twins, impostor}

    def test_AS_WIRE_006_duplicate_entries_are_refused(self) -> None:
        entry = WireNameEntry("view:devices.table.readState")
        with pytest.raises(ValueError, match="duplicate"):
            assign_wire_names([entry, entry])

    def test_AS_WIRE_006_a_repeated_entry_needs_an_instance_id(self) -> None:
        with pytest.raises(ValueError, match="instance_id"):
            WireNameEntry("view:devices.table.readState", repeated=True)

    @PROPERTY
    @given(catalogs())
    def test_AS_WIRE_006_no_two_entries_share_a_name(self, entries: list[WireNameEntry]) -> None:
        catalog = assign_wire_names(entries)
        assert len(set(catalog.names)) == len(entries)
        assert len(catalog.wire_name_map()) == len(entries)


# ----------------------------------------------------------------------------- AS-WIRE-007


class TestReverse:
    def test_AS_WIRE_007_the_map_gives_back_id_instance_and_registration(self) -> None:
        entries = [
            WireNameEntry("domain:devices.disable", "default", "reg_1"),
            WireNameEntry(DEEP_ID, "main", "reg_2", repeated=True),
            WireNameEntry(DEEP_ID, "comparison", "reg_3", repeated=True),
        ]
        catalog = assign_wire_names(entries)
        mapping = catalog.wire_name_map()
        assert mapping["domain_devices__disable"] == entries[0]
        assert mapping[catalog.names[2]].instance_id == "comparison"
        assert mapping[catalog.names[2]].registration_id == "reg_3"
        assert catalog.resolve("view_unknown__x") is None
        with pytest.raises(TypeError):
            mapping["x"] = entries[0]  # type: ignore[index]

    def test_AS_WIRE_007_qualified_and_shortened_names_are_not_decoded(self) -> None:
        catalog = assign_wire_names(
            [
                WireNameEntry(DEEP_ID, "main", repeated=True),
                WireNameEntry(DEEP_ID, "comparison", repeated=True),
            ]
        )
        assert all(decode_wire_name(name) is None for name in catalog.names)
        assert decode_wire_name("view_devices__table__readState_at_main") is None

    @pytest.mark.parametrize(
        "name",
        [
            "",
            "_",
            "view",
            "view_",
            "_view_x",
            "other_devices__table__x",
            "view_devices__table__readState_at_main",
            "view_devices___table__x",
            "domain_at____x__a",
            "domain_at__at__",
            "domain___at__",
            "view_devices_table__x",
            "view_devices__table__x_0_abcdefg",
            "view_Devices__table__x",
            "VIEW_devices__table__x",
            "view_devices__table__select_rows",
            _raw(LONG_ID),
        ],
    )
    def test_AS_WIRE_007_decode_refuses_what_it_cannot_re_encode(self, name: str) -> None:
        assert decode_wire_name(name) is None

    @PROPERTY
    @given(catalogs())
    def test_AS_WIRE_007_the_map_round_trips_every_emitted_name(self, entries: list[WireNameEntry]) -> None:
        catalog = assign_wire_names(entries)
        mapping = catalog.wire_name_map()
        for name, entry in catalog:
            assert mapping[name] is entry
            assert catalog.name_of(entry) == name
            decoded = decode_wire_name(name)
            # Decoding is optional, but when it answers it names this entry's capability.
            assert decoded is None or decoded == entry.capability_id
            if entry.repeated:
                assert decoded is None

    @PROPERTY
    @given(
        st.one_of(
            st.text(alphabet="viewdomain_.:-0atAZ", max_size=40),
            st.builds(
                lambda name, pos, insert: name[:pos] + insert + name[pos:],
                capability_ids.map(encode_capability_id),
                st.integers(min_value=0, max_value=64),
                st.sampled_from(["", "_", "__", "0", "_at_x", "_0_"]),
            ),
        )
    )
    def test_AS_WIRE_007_decode_never_answers_a_wrong_id(self, name: str) -> None:
        decoded = decode_wire_name(name)
        if decoded is not None:
            # The codec is injective on valid ids, so re-encoding proves the answer is the only one.
            assert encode_capability_id(decoded) == name
            assert decoded.startswith(("view:", "domain:"))
