"""rollog/v1 and v1.1 test vectors, copied verbatim from roll-verification.md §5.

Only the published bytes, hashes, signatures, permalinks and commitments: the
browser verifier is tested against the specification, not against the Python
producer. ``SIGNING_KEY_HEX`` is the T0 *test* key (never used in production),
here to re-sign tampered variants.
"""

from __future__ import annotations

from dataclasses import dataclass

# T0: SHA-256("rollog/v1 TEST signing key - never use in production") and its public key.
SIGNING_KEY_HEX = "738b034ef471fc5f87a1ea6daa11cf6d55127c9721736dedf884f5adbcd1fd2a"
PUBLIC_KEY_HEX = "d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63"


@dataclass(frozen=True)
class Signed:
    """One signed log entry: its canonical bytes (as text), hash, signature and permalink."""

    entry: str
    hash: str
    sig: str
    permalink: str


@dataclass(frozen=True)
class Opening:
    """The body of a sealed entry (§3.7) and the commitment its outer entry signs."""

    body: str
    commitment: str


# seq 0, epoch_open of epoch 1 (anchor x_0, L = 8)
T1 = Signed(
    entry='{"anchor":"ec8a55c4419f89b7abf17917b8c221afa2f84eba77be1a8d1a26516ab91af757","campaign":"hitos-demo","epoch":1,"key":"d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63","kind":"epoch_open","length":8,"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"time":"2025-01-15T19:00:00Z","v":1}',
    hash="91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536",
    sig="aaf33035ad945a41ef54cfee1b9d5b705d9733e8218a5ba3f0e2fad92db453c3"
    "4d28a47c711ad43d799cad4e5d3be030d37052848ee39d0b319de7eb01ba760c",
    permalink="serhk4gyjah73ol7o7ydy6ez",
)

# seq 1, 3d10 roll -> [5, 3, 5]
T2 = Signed(
    entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0001aaaaaaaaaaaaaaaaaaaaaa00","client_seed_source":"browser","dice":[5,3,5],"epoch":1,"epoch_index":1,"kind":"roll","parent":null,"prev":"91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536","purpose":"Atletismo: saltar el foso","rerolled":null,"scene":"escena-1","seed":"b060b8f656c740df65a4aa430518ecdc81e71aed7e8617fca0f0bf5e6670d9ff","seen":"91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536","seq":1,"spec":"3d10","time":"2025-01-15T20:00:00Z","user":"alicia","v":1,"visibility":"public"}',
    hash="31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb",
    sig="a2943376d96177abdae736b16d4dc51fdfad5c8192146c5afe7fe19920b28ba5"
    "08e50d53b1670e743be5dbdc30ce6425a0783d5fbadfb04f9241478d2e2c5109",
    permalink="gh3n3qn5c2ya6hla6gwuzalv",
)

# seq 2, 3d10 roll -> [10, 5, 3] (two rejected bytes)
T3 = Signed(
    entry='{"campaign":"hitos-demo","character":"Jimena","client_seed":"5eed0002bbbbbbbbbbbbbbbbbbbbbb01","client_seed_source":"browser","dice":[10,5,3],"epoch":1,"epoch_index":2,"kind":"roll","parent":null,"prev":"31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb","purpose":"Percepción: ¿hay alguien en la torre?","rerolled":null,"scene":"escena-1","seed":"a53238514284e3d11537d45b16bc9daa4053d8289732ef567c7b19657648e808","seen":"31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb","seq":2,"spec":"3d10","time":"2025-01-15T20:05:00Z","user":"bruno","v":1,"visibility":"public"}',
    hash="d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49",
    sig="2f708f26c7fe4597bc24afe7717f7a588c6d2a1ecd72e99e5ed20aaea5054375"
    "49fc5b78d18872bbd445c9d0a85deab91cbb30615b775b322385b61933238f06",
    permalink="2olnrfzrdf3xy2eylvylc5xr",
)

# seq 3, 3d10 roll -> [9, 2, 1]
T4 = Signed(
    entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0003cccccccccccccccccccccc00","client_seed_source":"browser","dice":[9,2,1],"epoch":1,"epoch_index":3,"kind":"roll","parent":null,"prev":"d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49","purpose":"Pelea: espada contra el ogro","rerolled":null,"scene":"escena-1","seed":"8902f769207ba03324da8c3936bb212a681d20204832192ea186249358f32ada","seen":"d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49","seq":3,"spec":"3d10","time":"2025-01-15T20:10:00Z","user":"alicia","v":1,"visibility":"public"}',
    hash="806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e",
    sig="e9133f4458c2b57b9839c95c4dd3067df6efe17827c07268009a5a371ade1a6b"
    "532d3b781f5846876f96a327c86cb584a1390998ce2c46979a26ec068d16da04",
    permalink="qbxi3ktrpmhupovevezjhhpk",
)

# seq 4, reroll of seq 3, positions 1 and 2 -> [9, 9, 10]
T5 = Signed(
    entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0004dddddddddddddddddddddd00","client_seed_source":"browser","dice":[9,9,10],"drawn":[9,10],"epoch":1,"epoch_index":4,"kind":"reroll","parent":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","prev":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","purpose":"Aspecto «Veterano de la frontera»: repite los dados 1 y 2","rerolled":[1,2],"scene":"escena-1","seed":"a44c283f1ed18568cbdc27f8febc551d40e6e8858156bb98991313fc15280981","seen":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","seq":4,"spec":"3d10","time":"2025-01-15T20:11:00Z","user":"alicia","v":1,"visibility":"public"}',
    hash="30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de",
    sig="32356c6db778351b125727716353394ea7af1e76552855cd893edce385f89fed"
    "3dea90ef00f803e86d57dbc9fe8874e5dea69e52f32ff3b6e3bf7074cd747108",
    permalink="gdinemzccoyud5pjbvpfjswt",
)

# seq 5, 5d6 roll -> [4, 5, 6, 6, 3]
T6 = Signed(
    entry='{"campaign":"hitos-demo","character":"Ogro","client_seed":"5eed0005eeeeeeeeeeeeeeeeeeeeee0d","client_seed_source":"browser","dice":[4,5,6,6,3],"epoch":1,"epoch_index":5,"kind":"roll","parent":null,"prev":"30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de","purpose":"Reserva de ataque del ogro","rerolled":null,"scene":"escena-1","seed":"b825a0163d81c0580b1d30df41d827e75537260fd6c94e8b361de1a890164609","seen":"30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de","seq":5,"spec":"5d6","time":"2025-01-15T20:15:00Z","user":"gm-carla","v":1,"visibility":"public"}',
    hash="2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161",
    sig="26847f97e44e0be7634db44f8ec68ca3a651fcfc94e0e0287d60d865c3d961d1"
    "7a3b76bfce1a4e8009b70eae045688a1cf026dd4f416f97a68c3e99f06f2f508",
    permalink="fyjcb6gycz4oyq2voczghaek",
)

# seq 6, 2d6! exploding roll -> [3, 6, 3]
T10 = Signed(
    entry='{"campaign":"hitos-demo","character":"Jimena","client_seed":"t10-2","client_seed_source":"browser","dice":[3,6,3],"epoch":1,"epoch_index":6,"kind":"roll","parent":null,"prev":"2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161","purpose":"Daño del hacha: 2d6! (el 6 explota)","rerolled":null,"scene":"escena-1","seed":"fb7906c340f25386a09df7d171ba2c1cbbe9c22029b103841fc26f0e410abd54","seen":"2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161","seq":6,"spec":"2d6!","time":"2025-01-15T20:20:00Z","user":"bruno","v":1,"visibility":"public"}',
    hash="e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d",
    sig="8e7322faab702cb17209f8db2606a23b991ffd2a542474a969875d66949a3de7"
    "6707ba3378e086ec78e233c81f0593f71255a3b1d335b4da349060e2b884090e",
    permalink="5ctvvpjpxflgdo3cq67dgorl",
)

# seq 7, 2d6 roll -> [3, 6]
T11_7 = Signed(
    entry='{"campaign":"hitos-demo","character":"Finn","client_seed":"t11-2","client_seed_source":"browser","dice":[3,6],"epoch":1,"epoch_index":7,"kind":"roll","parent":null,"prev":"e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d","purpose":"Aventuras: trepar al árbol de caramelo","rerolled":null,"scene":"escena-1","seed":"667d5e1bbdeec03a459ecf5f617152eceb2afaff97205168ad4da601e428d68e","seen":"e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d","seq":7,"spec":"2d6","time":"2025-01-15T20:25:00Z","user":"dario","v":1,"visibility":"public"}',
    hash="6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04",
    sig="805f43e96fe7e20c65d99b3062c917c75ee4b2680ae72b4d5f399d7201718822"
    "ce273d0cb1941f214a91d22b0bcf09ea259bee846040be4685187bdc6008d50d",
    permalink="nntiztzu67ugjphz5dzzbhgs",
)

# seq 8, extend of seq 7 adding 1d6 -> [3, 6, 6]
T11_8 = Signed(
    entry='{"campaign":"hitos-demo","character":"Finn","client_seed":"t11-ext","client_seed_source":"browser","converted":[1],"dice":[3,6,6],"drawn":[6],"epoch":1,"epoch_index":8,"kind":"extend","parent":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","prev":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","purpose":"Éxito chachi: el 6 de la posición 1 se lee como 5 y añade 1d6","rerolled":null,"scene":"escena-1","seed":"14ecc4e5b3663037c1e0258a309e7764648b7f056c98e2487d5c8f66da2693cc","seen":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","seq":8,"spec":"1d6","time":"2025-01-15T20:26:00Z","user":"dario","v":1,"visibility":"public"}',
    hash="2dcf840defd619de707e121016d3bcbb3ae53ead721761e72823ae20e5605cd1",
    sig="0b678ad91278c1b92896523f9b35be78ae1e986145b253ec65071453d2012568"
    "77ad27303b7190d21864ad62d6de5d6d3cb11a26a0a0880b2f3fb0402debe907",
    permalink="fxhyidpp2ym544d6ciibnu54",
)

# seq 9, epoch_open of epoch 2 (epoch 1 exhausted)
SEQ9 = Signed(
    entry='{"anchor":"689e2768fc9df64021b42cf95fa020065ad5c4f074dc06f72ba7da1b41cb078e","campaign":"hitos-demo","epoch":2,"key":"d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63","kind":"epoch_open","length":8,"prev":"2dcf840defd619de707e121016d3bcbb3ae53ead721761e72823ae20e5605cd1","seq":9,"time":"2025-01-15T20:30:00Z","v":1}',
    hash="09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413",
    sig="63115b66a7db498936ed0fcc4732622ee428993ec8d5b79c46c486bb329ed891"
    "523254edadae90783d9551bab1528797e4a6ec97fc76bf4003265dcab59b0d00",
    permalink="bhahgnduqef6toxhjcxd5vlf",
)

# seq 10, sealed 3d10 roll (outer entry), audience recipients
T12 = Signed(
    entry='{"audience":"recipients","campaign":"hitos-demo","commitment":"f466f329a7bf8738597efb1475e63e884c130101812f33c7bc3f7d281c5a12ab","epoch":2,"epoch_index":1,"kind":"sealed","prev":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","seed":"e3b56a2302574159f302b226ad7567c1e4a9423e17242f4db2c1c5c4f66e63f2","seq":10,"time":"2025-01-15T20:35:00Z","v":1}',
    hash="552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035",
    sig="b948759aa40444cbee4680a163190e0c019e638bc6c3c78a2b47ab382bd57f98"
    "2c69ec8fe24be932ca15afa7c9b5ec5d1ee4507696f161505e9c19d940e43c06",
    permalink="kuw6d5ovib7eklrp37ft7r7u",
)

# seq 11, sealed reroll of T12, position 0 (outer entry)
T13 = Signed(
    entry='{"audience":"recipients","campaign":"hitos-demo","commitment":"d6b079284e62815d2c075832603b5fe809d3cd8facb5d8f2521ba3d660187cb2","epoch":2,"epoch_index":2,"kind":"sealed","prev":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","seed":"bad2f9132d8527601ab75f8571a7f0f4ac4afb66a52b513f2575810fc1f2eda3","seq":11,"time":"2025-01-15T20:36:00Z","v":1}',
    hash="b9d8f29fae47c42181de696ae45e43b595a68da5d265750aa3dff5072f362ae2",
    sig="8b43b54d24aa03969fb8f5077e7822bf7d8cbd8cc87e2bbae120329bf4091a89"
    "79bdd2b98049c03fee11edc51b57e8ace1d0a3158294d2c3e2449011f176b107",
    permalink="xhmpfh5oi7ccdao6nfvoixsd",
)

# Openings of T12 and T13 (nonces 0x40…0x5f and 0x60…0x7f).
T12_OPENING = Opening(
    body='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0010a5a5a5a5a5a5a5a5a5a5a500","client_seed_source":"browser","dice":[10,4,3],"epoch":2,"epoch_index":1,"kind":"roll","nonce":"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f","parent":null,"prev":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","purpose":"Sigilo: ¿me ven los guardias? (solo para la GM y Jimena)","rerolled":null,"scene":"escena-2","seed":"e3b56a2302574159f302b226ad7567c1e4a9423e17242f4db2c1c5c4f66e63f2","seen":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","seq":10,"spec":"3d10","time":"2025-01-15T20:35:00Z","user":"alicia","v":1,"visibility":"public"}',
    commitment="f466f329a7bf8738597efb1475e63e884c130101812f33c7bc3f7d281c5a12ab",
)

T13_OPENING = Opening(
    body='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0011a5a5a5a5a5a5a5a5a5a5a500","client_seed_source":"browser","dice":[5,4,3],"drawn":[5],"epoch":2,"epoch_index":2,"kind":"reroll","nonce":"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f","parent":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","prev":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","purpose":"Aspecto «Sombra entre sombras»: repite el dado 0","rerolled":[0],"scene":"escena-2","seed":"bad2f9132d8527601ab75f8571a7f0f4ac4afb66a52b513f2575810fc1f2eda3","seen":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","seq":11,"spec":"3d10","time":"2025-01-15T20:36:00Z","user":"alicia","v":1,"visibility":"public"}',
    commitment="d6b079284e62815d2c075832603b5fe809d3cd8facb5d8f2521ba3d660187cb2",
)
