"""Write the built-in demo datasets (``demo-en``, ``demo-zh``) from structured facts.

Each memory carries labels (person, place, topic); each query is a predicate over those
labels, so its relevant set is every memory that satisfies it, by construction. Run from the
repository root: ``python scripts/build_demo_datasets.py``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query, save_dataset

OUT = Path("src/mnemometer/datasets/builtin")
NOW = datetime(2026, 6, 1, 9, 0)

# (id, date, person, place, topic, text)
EN = [
    (
        "en01",
        "2026-03-02",
        "Priya",
        "Lisbon",
        "move",
        "My sister Priya moved to Lisbon in March to start a job at a biotech lab.",
    ),
    (
        "en02",
        "2026-03-20",
        "Priya",
        "Lisbon",
        "home",
        "Priya rents a small flat in Alfama with a view over the river.",
    ),
    (
        "en03",
        "2026-04-11",
        "Priya",
        "Lisbon",
        "food",
        "Priya says the best custard tarts in Lisbon are at a bakery near her office.",
    ),
    (
        "en04",
        "2026-05-25",
        "Priya",
        "Porto",
        "trip",
        "Priya spent a long weekend in Porto tasting wine with colleagues.",
    ),
    (
        "en05",
        "2026-01-15",
        "Marco",
        "Berlin",
        "work",
        "Marco leads the payments team and works from the Berlin office.",
    ),
    (
        "en06",
        "2026-02-03",
        "Marco",
        "Berlin",
        "food",
        "Marco is vegetarian and allergic to peanuts, so team dinners avoid satay.",
    ),
    (
        "en07",
        "2026-04-28",
        "Marco",
        "Berlin",
        "work",
        "Marco asked for the quarterly budget review to move from Tuesday to Thursday.",
    ),
    (
        "en08",
        "2026-05-30",
        "Marco",
        "Vienna",
        "trip",
        "Marco flew to Vienna for a payments conference and gave a talk on fraud checks.",
    ),
    (
        "en09",
        "2025-11-09",
        "Lena",
        "Berlin",
        "health",
        "Lena started physiotherapy for her knee after the half marathon.",
    ),
    (
        "en10",
        "2026-02-14",
        "Lena",
        "Berlin",
        "hobby",
        "Lena joined a Tuesday evening pottery class in Kreuzberg.",
    ),
    (
        "en11",
        "2026-05-18",
        "Lena",
        "Berlin",
        "hobby",
        "Lena sold her first set of ceramic mugs at the Sunday flea market.",
    ),
    (
        "en12",
        "2026-04-02",
        "Lena",
        "Hamburg",
        "trip",
        "Lena took the train to Hamburg to visit her grandmother on her birthday.",
    ),
    (
        "en13",
        "2026-01-05",
        "Sam",
        "Berlin",
        "health",
        "I renewed my gym membership and booked a trainer for Monday mornings.",
    ),
    (
        "en14",
        "2026-03-08",
        "Sam",
        "Berlin",
        "money",
        "I set up a standing order of 200 euros a month into the holiday savings account.",
    ),
    (
        "en15",
        "2026-05-27",
        "Sam",
        "Berlin",
        "money",
        "My landlord raised the rent by 45 euros starting in July.",
    ),
    (
        "en16",
        "2026-04-19",
        "Sam",
        "Lisbon",
        "trip",
        "I visited Priya in Lisbon over Easter and we took the tram to Belem.",
    ),
    (
        "en17",
        "2026-04-20",
        "Sam",
        "Lisbon",
        "food",
        "In Lisbon I tried grilled sardines for the first time and loved them.",
    ),
    (
        "en18",
        "2026-02-21",
        "Sam",
        "Berlin",
        "car",
        "The car failed its inspection because of worn front brake pads.",
    ),
    (
        "en19",
        "2026-03-01",
        "Sam",
        "Berlin",
        "car",
        "The garage replaced the brake pads and the car passed the inspection.",
    ),
    (
        "en20",
        "2025-12-24",
        "Aunt Rosa",
        "Naples",
        "family",
        "Aunt Rosa hosted Christmas Eve in Naples and made seven kinds of fish.",
    ),
    (
        "en21",
        "2026-05-10",
        "Aunt Rosa",
        "Naples",
        "health",
        "Aunt Rosa had cataract surgery and is recovering well.",
    ),
    (
        "en22",
        "2026-05-29",
        "Marco",
        "Berlin",
        "work",
        "Marco will be on parental leave from mid June until September.",
    ),
    (
        "en23",
        "2026-05-31",
        "Sam",
        "Berlin",
        "work",
        "I promised to send the onboarding checklist to the two new hires by Friday.",
    ),
    (
        "en24",
        "2026-05-12",
        "Lena",
        "Berlin",
        "work",
        "Lena switched from the design team to product research in May.",
    ),
]
EN_QUERIES = [
    ("enq01", "person", "easy", "What do I know about Priya?", lambda m: m[2] == "Priya"),
    ("enq02", "person", "easy", "What is going on with Marco?", lambda m: m[2] == "Marco"),
    ("enq03", "person", "medium", "How is Aunt Rosa doing?", lambda m: m[2] == "Aunt Rosa"),
    ("enq04", "location", "easy", "What happened in Lisbon?", lambda m: m[3] == "Lisbon"),
    ("enq05", "location", "medium", "Any news from Naples?", lambda m: m[3] == "Naples"),
    ("enq06", "event", "medium", "Which trips did people take?", lambda m: m[4] == "trip"),
    (
        "enq07",
        "event",
        "medium",
        "What happened with the car and its inspection?",
        lambda m: m[4] == "car",
    ),
    (
        "enq08",
        "event",
        "hard",
        "What are the food preferences and allergies I should remember?",
        lambda m: m[4] == "food",
    ),
    (
        "enq09",
        "composite",
        "medium",
        "What did Sam do in Lisbon?",
        lambda m: m[2] == "Sam" and m[3] == "Lisbon",
    ),
    (
        "enq10",
        "composite",
        "hard",
        "What are Lena's hobbies in Berlin?",
        lambda m: m[2] == "Lena" and m[4] == "hobby",
    ),
    (
        "enq11",
        "composite",
        "medium",
        "Work news about Marco",
        lambda m: m[2] == "Marco" and m[4] == "work",
    ),
    (
        "enq12",
        "event",
        "hard",
        "Any changes to my money, rent or savings?",
        lambda m: m[4] == "money",
    ),
    (
        "enq13",
        "event",
        "medium",
        "Health updates: surgery, physiotherapy, gym",
        lambda m: m[4] == "health",
    ),
    ("enq14", "negative", "medium", "What did Priya say about her dog?", lambda m: False),
    ("enq15", "negative", "hard", "When is the flight to Tokyo?", lambda m: False),
]

ZH = [
    (
        "zh01",
        "2026-03-02",
        "王芳",
        "杭州",
        "搬家",
        "妹妹王芳三月搬到杭州，在一家生物科技公司上班。",
    ),
    ("zh02", "2026-03-20", "王芳", "杭州", "住房", "王芳在西湖附近租了一套小公寓，阳台能看到湖。"),
    ("zh03", "2026-04-11", "王芳", "杭州", "饮食", "王芳说杭州最好吃的小笼包在她公司楼下。"),
    ("zh04", "2026-05-25", "王芳", "苏州", "旅行", "王芳和同事去苏州玩了一个周末，逛了拙政园。"),
    ("zh05", "2026-01-15", "李强", "北京", "工作", "李强负责支付团队，在北京办公室上班。"),
    (
        "zh06",
        "2026-02-03",
        "李强",
        "北京",
        "饮食",
        "李强吃素，而且对花生过敏，团队聚餐要避开花生酱。",
    ),
    ("zh07", "2026-04-28", "李强", "北京", "工作", "李强要求把季度预算评审从周二改到周四。"),
    (
        "zh08",
        "2026-05-30",
        "李强",
        "上海",
        "旅行",
        "李强去上海参加支付大会，做了关于反欺诈的演讲。",
    ),
    ("zh09", "2025-11-09", "陈静", "北京", "健康", "陈静跑完半程马拉松后膝盖受伤，开始做理疗。"),
    ("zh10", "2026-02-14", "陈静", "北京", "爱好", "陈静报了周二晚上的陶艺课。"),
    ("zh11", "2026-05-18", "陈静", "北京", "爱好", "陈静在周日的市集上卖出了第一套陶瓷杯。"),
    ("zh12", "2026-04-02", "陈静", "天津", "旅行", "陈静坐高铁去天津给奶奶过生日。"),
    ("zh13", "2026-01-05", "我", "北京", "健康", "我续了健身房的会员，约了周一早上的私教课。"),
    ("zh14", "2026-03-08", "我", "北京", "理财", "我设置了每月自动转两千元到旅游储蓄账户。"),
    ("zh15", "2026-05-27", "我", "北京", "理财", "房东说从七月开始房租涨三百元。"),
    ("zh16", "2026-04-19", "我", "杭州", "旅行", "清明节我去杭州看王芳，我们一起坐船游了西湖。"),
    ("zh17", "2026-04-20", "我", "杭州", "饮食", "在杭州我第一次吃了西湖醋鱼，味道很特别。"),
    ("zh18", "2026-02-21", "我", "北京", "汽车", "汽车年检没通过，因为前刹车片磨损了。"),
    ("zh19", "2026-03-01", "我", "北京", "汽车", "修车厂换了刹车片，汽车年检通过了。"),
    ("zh20", "2025-12-24", "张阿姨", "广州", "家庭", "张阿姨在广州办了年夜饭，做了七道菜。"),
    ("zh21", "2026-05-10", "张阿姨", "广州", "健康", "张阿姨做了白内障手术，恢复得很好。"),
    ("zh22", "2026-05-29", "李强", "北京", "工作", "李强六月中旬开始休育儿假，九月回来。"),
]
ZH_QUERIES = [
    ("zhq01", "person", "easy", "王芳最近怎么样？", lambda m: m[2] == "王芳"),
    ("zhq02", "person", "easy", "李强有什么消息？", lambda m: m[2] == "李强"),
    ("zhq03", "person", "medium", "张阿姨的情况", lambda m: m[2] == "张阿姨"),
    ("zhq04", "location", "easy", "在杭州发生过什么？", lambda m: m[3] == "杭州"),
    ("zhq05", "location", "medium", "广州那边有什么事？", lambda m: m[3] == "广州"),
    ("zhq06", "event", "medium", "大家去哪里旅行了？", lambda m: m[4] == "旅行"),
    ("zhq07", "event", "medium", "汽车年检和刹车片的事", lambda m: m[4] == "汽车"),
    ("zhq08", "event", "hard", "饮食偏好和过敏要注意什么？", lambda m: m[4] == "饮食"),
    (
        "zhq09",
        "composite",
        "medium",
        "我在杭州做了什么？",
        lambda m: m[2] == "我" and m[3] == "杭州",
    ),
    ("zhq10", "composite", "hard", "陈静有什么爱好？", lambda m: m[2] == "陈静" and m[4] == "爱好"),
    ("zhq11", "composite", "medium", "李强工作上的事", lambda m: m[2] == "李强" and m[4] == "工作"),
    ("zhq12", "event", "hard", "房租和储蓄有什么变化？", lambda m: m[4] == "理财"),
    ("zhq13", "negative", "medium", "王芳养的猫叫什么名字？", lambda m: False),
    ("zhq14", "negative", "hard", "去东京的航班是几点？", lambda m: False),
]


def build(name: str, lang: str, facts: list, queries: list) -> Dataset:
    """One demo dataset from its facts and query rules."""
    memories = [
        Memory(
            id=mid,
            text=text,
            timestamp=datetime.fromisoformat(date),
            metadata={"person": person, "place": place, "topic": topic},
        )
        for mid, date, person, place, topic, text in facts
    ]
    qs = [
        Query(
            id=qid,
            text=text,
            type=qtype,
            difficulty=diff,
            relevant_ids=[f[0] for f in facts if pred(f)],
        )
        for qid, qtype, diff, text, pred in queries
    ]
    info = DatasetInfo(
        name=name,
        version="1",
        language=lang,
        reference_time=NOW,
        source="mnemometer built-in demo (scripts/build_demo_datasets.py)",
        licence="MIT",
    )
    return Dataset(info=info, memories=memories, queries=qs)


if __name__ == "__main__":
    save_dataset(build("demo-en", "en", EN, EN_QUERIES), OUT / "demo_en.json")
    save_dataset(build("demo-zh", "zh", ZH, ZH_QUERIES), OUT / "demo_zh.json")
    print("wrote", OUT / "demo_en.json", OUT / "demo_zh.json")
