"""Vocabularies for the procedural generator, in English and Chinese.

Keys (topics, objects, actions, relations, scripts) are language-independent, so one seed
gives the same structure in both languages and only the surface text differs. Every object
lists the actions that fit it (no "held a meeting of gold").
"""

from __future__ import annotations

# action key -> (paid?, en forms, zh forms)
# en forms: (present, past, paraphrase past, indirect past, colloquial past)
# zh forms: (verb, past, paraphrase, indirect, colloquial)
ACTIONS: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...]]] = {
    "buy": (
        True,
        ("buy", "bought", "purchased", "paid money for", "picked up"),
        ("买", "买了", "购置了", "掏钱换来了", "入手了"),
    ),
    "sell": (
        True,
        ("sell", "sold", "traded away", "let go of for cash", "flogged"),
        ("卖", "卖了", "出售了", "换成现钱送走了", "出手了"),
    ),
    "repair": (
        True,
        ("repair", "repaired", "mended", "got working again", "fixed up"),
        ("修", "修好了", "修缮了", "让它重新能用了", "捣鼓好了"),
    ),
    "borrow": (
        False,
        ("borrow", "borrowed", "took on loan", "had the temporary use of", "nabbed"),
        ("借", "借了", "借用了", "暂时拿来用了", "蹭了"),
    ),
    "give": (
        False,
        ("give away", "gave away", "donated", "handed over for nothing", "passed on"),
        ("送", "送出了", "捐赠了", "白白交给了别人", "送掉了"),
    ),
    "plant": (
        False,
        ("plant", "planted", "sowed", "put into the soil", "stuck in"),
        ("种", "种下了", "栽植了", "埋进了土里", "种了"),
    ),
    "cook": (
        False,
        ("cook", "cooked", "prepared", "made something to eat from", "whipped up"),
        ("做", "做了", "烹制了", "弄出来吃了", "整了"),
    ),
    "order": (
        True,
        ("order", "ordered", "requested", "asked to have delivered", "got sent"),
        ("订", "订了", "预订了", "让人送上门了", "下单了"),
    ),
    "rent": (
        True,
        ("rent", "rented", "hired", "paid to use for a while", "got hold of"),
        ("租", "租了", "租用了", "花钱借来用了", "租来了"),
    ),
}

# topic key -> (en name, zh name, en venues, zh venues)
TOPICS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "gardening": (
        "gardening",
        "园艺",
        ("Garden Centre", "Plant Nursery", "Allotments"),
        ("花卉市场", "苗圃", "社区菜园"),
    ),
    "cycling": (
        "cycling",
        "骑行",
        ("Bike Shop", "Cycling Club", "Riverside Park"),
        ("自行车店", "骑行俱乐部", "滨江公园"),
    ),
    "cooking": (
        "cooking",
        "烹饪",
        ("Farmers Market", "Cookware Shop", "Community Kitchen"),
        ("农贸市场", "厨具店", "社区厨房"),
    ),
    "music": (
        "music",
        "音乐",
        ("Music Shop", "Concert Hall", "Rehearsal Studio"),
        ("琴行", "音乐厅", "排练室"),
    ),
    "reading": (
        "reading",
        "阅读",
        ("Bookshop", "Public Library", "Reading Café"),
        ("书店", "图书馆", "读书咖啡馆"),
    ),
    "photography": (
        "photography",
        "摄影",
        ("Camera Shop", "Photo Studio", "Art Gallery"),
        ("相机店", "照相馆", "画廊"),
    ),
    "fitness": (
        "fitness",
        "健身",
        ("Gym", "Sports Store", "Swimming Pool"),
        ("健身房", "体育用品店", "游泳馆"),
    ),
    "home": (
        "home improvement",
        "家居",
        ("Furniture Store", "Hardware Store", "Flea Market"),
        ("家具城", "五金店", "跳蚤市场"),
    ),
    "travel": (
        "travel",
        "旅行",
        ("Travel Agency", "Train Station", "Luggage Shop"),
        ("旅行社", "火车站", "箱包店"),
    ),
    "pets": (
        "pets",
        "宠物",
        ("Pet Shop", "Vet Clinic", "Dog Park"),
        ("宠物店", "宠物医院", "狗狗公园"),
    ),
}

# object key -> (topic, actions, (min, max) unit price,
#   en (singular, plural, paraphrase plural, indirect description),
#   zh (noun, measure word, paraphrase, indirect description))
OBJECTS: dict[
    str, tuple[str, tuple[str, ...], tuple[int, int], tuple[str, ...], tuple[str, ...]]
] = {
    "rose_bush": (
        "gardening",
        ("buy", "plant", "give"),
        (15, 60),
        ("rose bush", "rose bushes", "rose shrubs", "thorny flowering plants"),
        ("玫瑰苗", "株", "月季花苗", "一种带刺会开花的植物"),
    ),
    "tomato_plant": (
        "gardening",
        ("buy", "plant", "give"),
        (3, 12),
        ("tomato plant", "tomato plants", "tomato seedlings", "young plants that grow red fruit"),
        ("番茄苗", "株", "西红柿秧", "会结红色果子的幼苗"),
    ),
    "watering_can": (
        "gardening",
        ("buy", "borrow", "give"),
        (8, 30),
        (
            "watering can",
            "watering cans",
            "sprinkling cans",
            "containers for giving plants a drink",
        ),
        ("洒水壶", "个", "浇花壶", "给植物喝水用的容器"),
    ),
    "lawn_mower": (
        "gardening",
        ("buy", "repair", "borrow", "rent", "sell"),
        (120, 450),
        ("lawn mower", "lawn mowers", "grass cutters", "machines that keep a lawn short"),
        ("割草机", "台", "剪草机", "让草坪保持整齐的机器"),
    ),
    "bicycle": (
        "cycling",
        ("buy", "repair", "sell", "rent", "borrow"),
        (150, 900),
        ("bicycle", "bicycles", "bikes", "two-wheeled things you pedal"),
        ("自行车", "辆", "单车", "要用脚蹬的两轮交通工具"),
    ),
    "helmet": (
        "cycling",
        ("buy", "give", "borrow"),
        (25, 120),
        ("helmet", "helmets", "head protectors", "hard shells that guard your skull"),
        ("头盔", "顶", "安全帽", "保护脑袋的硬壳"),
    ),
    "bike_lock": (
        "cycling",
        ("buy", "order", "give"),
        (10, 60),
        ("bike lock", "bike locks", "cycle padlocks", "chains that stop thieves"),
        ("车锁", "把", "自行车锁", "防止被偷的链子"),
    ),
    "inner_tube": (
        "cycling",
        ("buy", "order", "repair"),
        (5, 20),
        ("inner tube", "inner tubes", "tyre tubes", "rubber rings that hold air"),
        ("内胎", "条", "轮胎内管", "装空气的橡胶圈"),
    ),
    "dumpling": (
        "cooking",
        ("cook", "order", "give"),
        (1, 3),
        ("dumpling", "dumplings", "stuffed parcels of dough", "little filled pockets of food"),
        ("饺子", "盘", "水饺", "包着馅的面食"),
    ),
    "frying_pan": (
        "cooking",
        ("buy", "borrow", "give"),
        (15, 90),
        ("frying pan", "frying pans", "skillets", "flat things for cooking over a flame"),
        ("平底锅", "口", "煎锅", "在火上煎东西用的器具"),
    ),
    "cookbook": (
        "cooking",
        ("buy", "borrow", "give", "sell"),
        (12, 45),
        ("cookbook", "cookbooks", "recipe books", "volumes telling you what to make for dinner"),
        ("菜谱", "本", "食谱书", "教人做饭的书"),
    ),
    "rice_cooker": (
        "cooking",
        ("buy", "repair", "sell", "give"),
        (30, 200),
        ("rice cooker", "rice cookers", "rice steamers", "appliances for making grain fluffy"),
        ("电饭煲", "台", "电饭锅", "把米变成饭的电器"),
    ),
    "guitar": (
        "music",
        ("buy", "repair", "sell", "borrow", "rent"),
        (120, 1500),
        ("guitar", "guitars", "six-string instruments", "things you strum"),
        ("吉他", "把", "六弦琴", "用手指拨弦的乐器"),
    ),
    "violin": (
        "music",
        ("buy", "repair", "sell", "borrow", "rent"),
        (200, 3000),
        ("violin", "violins", "fiddles", "instruments played with a bow"),
        ("小提琴", "把", "提琴", "用弓拉的乐器"),
    ),
    "concert_ticket": (
        "music",
        ("buy", "order", "give", "sell"),
        (30, 180),
        ("concert ticket", "concert tickets", "gig passes", "passes to hear a live show"),
        ("演唱会门票", "张", "音乐会入场券", "进场听现场表演的凭证"),
    ),
    "vinyl_record": (
        "music",
        ("buy", "sell", "give", "order"),
        (15, 80),
        ("vinyl record", "vinyl records", "LPs", "black discs that spin under a needle"),
        ("黑胶唱片", "张", "老唱片", "在唱针下转动的黑色圆盘"),
    ),
    "novel": (
        "reading",
        ("buy", "borrow", "give", "sell"),
        (8, 30),
        ("novel", "novels", "works of fiction", "long made-up stories bound in paper"),
        ("小说", "本", "长篇故事书", "装订成册的虚构故事"),
    ),
    "atlas": (
        "reading",
        ("buy", "borrow", "give"),
        (20, 70),
        ("atlas", "atlases", "books of maps", "volumes showing the whole world"),
        ("地图册", "本", "世界地图集", "把全世界画在纸上的书"),
    ),
    "magazine": (
        "reading",
        ("buy", "order", "give"),
        (4, 12),
        ("magazine", "magazines", "periodicals", "glossy monthly reads"),
        ("杂志", "本", "期刊", "每月出一期的读物"),
    ),
    "e_reader": (
        "reading",
        ("buy", "repair", "sell", "borrow"),
        (90, 300),
        ("e-reader", "e-readers", "ebook devices", "screens made for books"),
        ("电子阅读器", "台", "电纸书", "专门用来看书的屏幕"),
    ),
    "camera": (
        "photography",
        ("buy", "repair", "sell", "rent", "borrow"),
        (300, 2500),
        ("camera", "cameras", "photo devices", "boxes that capture pictures"),
        ("相机", "台", "照相机", "能留住画面的机器"),
    ),
    "lens": (
        "photography",
        ("buy", "rent", "sell", "borrow"),
        (150, 1800),
        ("lens", "lenses", "optics", "glass that bends light for pictures"),
        ("镜头", "支", "光学镜头", "让光线聚焦成像的玻璃"),
    ),
    "tripod": (
        "photography",
        ("buy", "borrow", "rent", "give"),
        (30, 250),
        ("tripod", "tripods", "camera stands", "three-legged supports"),
        ("三脚架", "个", "相机支架", "三条腿的支撑物"),
    ),
    "photo_album": (
        "photography",
        ("buy", "order", "give"),
        (10, 60),
        ("photo album", "photo albums", "picture books", "books for keeping snapshots"),
        ("相册", "本", "影集", "收藏照片的本子"),
    ),
    "dumbbell": (
        "fitness",
        ("buy", "sell", "give"),
        (20, 120),
        ("dumbbell", "dumbbells", "hand weights", "heavy things you lift for strength"),
        ("哑铃", "对", "手持重锤", "举起来练力气的重物"),
    ),
    "yoga_mat": (
        "fitness",
        ("buy", "order", "give"),
        (15, 70),
        ("yoga mat", "yoga mats", "exercise mats", "padded floor sheets for stretching"),
        ("瑜伽垫", "张", "健身垫", "铺在地上做拉伸的软垫"),
    ),
    "treadmill": (
        "fitness",
        ("buy", "repair", "sell", "rent"),
        (400, 2000),
        ("treadmill", "treadmills", "running machines", "belts you jog on without going anywhere"),
        ("跑步机", "台", "健走机", "原地跑步用的机器"),
    ),
    "swim_cap": (
        "fitness",
        ("buy", "give", "order"),
        (5, 25),
        ("swim cap", "swim caps", "bathing caps", "tight hats worn in the water"),
        ("泳帽", "顶", "游泳帽", "下水时戴的紧帽子"),
    ),
    "bookshelf": (
        "home",
        ("buy", "repair", "sell", "give"),
        (60, 400),
        ("bookshelf", "bookshelves", "book cases", "furniture for standing volumes upright"),
        ("书架", "个", "书柜", "竖着放书的家具"),
    ),
    "lamp": (
        "home",
        ("buy", "repair", "sell", "give"),
        (20, 150),
        ("lamp", "lamps", "light fittings", "things that brighten a room at night"),
        ("台灯", "盏", "灯具", "夜里照亮房间的东西"),
    ),
    "armchair": (
        "home",
        ("buy", "repair", "sell", "give"),
        (150, 900),
        ("armchair", "armchairs", "easy chairs", "padded seats with sides to rest your elbows"),
        ("扶手椅", "把", "沙发椅", "两边能搁胳膊的软座"),
    ),
    "drill": (
        "home",
        ("buy", "borrow", "rent", "repair"),
        (40, 250),
        ("drill", "drills", "power drills", "tools that bore holes in walls"),
        ("电钻", "把", "冲击钻", "在墙上打洞的工具"),
    ),
    "suitcase": (
        "travel",
        ("buy", "borrow", "repair", "give"),
        (60, 350),
        ("suitcase", "suitcases", "travel cases", "boxes on wheels for your clothes"),
        ("行李箱", "个", "拉杆箱", "装衣服出门用的带轮箱子"),
    ),
    "train_ticket": (
        "travel",
        ("buy", "order", "give"),
        (20, 200),
        ("train ticket", "train tickets", "rail passes", "slips that let you ride the rails"),
        ("火车票", "张", "车票", "坐铁路出行的凭证"),
    ),
    "guidebook": (
        "travel",
        ("buy", "borrow", "give", "sell"),
        (10, 35),
        ("guidebook", "guidebooks", "travel guides", "books about where to go abroad"),
        ("旅游指南", "本", "导游书", "告诉你去哪里玩的书"),
    ),
    "travel_pillow": (
        "travel",
        ("buy", "give", "order"),
        (8, 40),
        ("travel pillow", "travel pillows", "neck cushions", "soft rings for sleeping upright"),
        ("旅行枕", "个", "U形枕", "坐着睡觉时垫脖子的软圈"),
    ),
    "dog_bed": (
        "pets",
        ("buy", "order", "give"),
        (25, 150),
        ("dog bed", "dog beds", "pet cushions", "places for a puppy to sleep"),
        ("狗窝", "个", "宠物床", "给小狗睡觉的地方"),
    ),
    "bird_cage": (
        "pets",
        ("buy", "repair", "sell", "give"),
        (30, 200),
        ("bird cage", "bird cages", "aviaries", "wire homes for feathered friends"),
        ("鸟笼", "个", "鸟舍", "给鸟住的铁丝屋"),
    ),
    "cat_toy": (
        "pets",
        ("buy", "order", "give"),
        (3, 20),
        ("cat toy", "cat toys", "kitten playthings", "things a kitten chases"),
        ("猫玩具", "个", "逗猫棒", "让小猫追着玩的东西"),
    ),
    "aquarium": (
        "pets",
        ("buy", "repair", "sell", "give"),
        (80, 600),
        ("aquarium", "aquariums", "fish tanks", "glass homes for swimming pets"),
        ("鱼缸", "个", "水族箱", "养鱼用的玻璃屋"),
    ),
}

RELATIONS: dict[str, tuple[str, str]] = {
    "friend": ("friend", "朋友"),
    "colleague": ("colleague", "同事"),
    "neighbour": ("neighbour", "邻居"),
    "cousin": ("cousin", "表亲"),
    "classmate": ("classmate", "同学"),
    "teammate": ("teammate", "队友"),
}

OCCUPATIONS: tuple[tuple[str, str], ...] = (
    ("teacher", "教师"),
    ("nurse", "护士"),
    ("engineer", "工程师"),
    ("accountant", "会计"),
    ("chef", "厨师"),
    ("lawyer", "律师"),
    ("architect", "建筑师"),
    ("pharmacist", "药剂师"),
    ("journalist", "记者"),
    ("librarian", "图书管理员"),
    ("electrician", "电工"),
    ("designer", "设计师"),
    ("doctor", "医生"),
    ("photographer", "摄影师"),
    ("programmer", "程序员"),
    ("student", "学生"),
    ("baker", "面包师"),
    ("dentist", "牙医"),
    ("firefighter", "消防员"),
    ("musician", "音乐人"),
)

EN_FEMALE = """Alice Amelia Anna Beatrice Bella Carla Chloe Clara Daisy Diana Eleanor Ella Emily
Emma Eva Fiona Freya Grace Hannah Harriet Helen Isla Ivy Jade Julia Kate Laura Leah Lily
Lucy Maya Megan Mia Molly Naomi Nina Olivia Paige Phoebe Poppy Rachel Rebecca Rose Ruby
Sadie Sarah Sophie Stella Tessa Una Vera Violet Wendy Yara Zoe Agnes Bianca Cora""".split()
EN_MALE = """Aaron Adam Alex Ben Caleb Charlie Daniel David Dylan Edward Ethan Felix Finn
Gabriel George Harry Henry Isaac Jack Jacob James Jonah Joseph Kai Leo Liam Lucas Luke
Marcus Max Nathan Noah Oliver Oscar Owen Patrick Peter Quentin Reuben Ryan Samuel Sean
Simon Theo Thomas Toby Tom Victor Walter William Xavier Zach Arthur Hugo Ivan Milo""".split()
EN_LAST = """Adams Allen Bailey Baker Barnes Bell Bennett Brooks Brown Butler Campbell Carter
Chen Clarke Collins Cook Cooper Cox Davies Dixon Edwards Ellis Evans Fisher Fleming Foster
Fox Gibson Gordon Graham Grant Gray Green Hall Harper Harris Hayes Hill Holmes Hughes Hunt
Jackson James Jenkins Johnson Jones Kelly Kennedy King Knight Lane Lee Lewis Lloyd Marsh
Martin Mason Mills Mitchell Moore Morgan Morris Murphy Murray Nash Newton Owen Palmer Park
Parker Patel Pearce Perry Phillips Porter Powell Price Quinn Reed Reid Richards Roberts
Robinson Rogers Ross Russell Ryan Scott Shaw Simpson Smith Spencer Stevens Stone Taylor
Thomas Thompson Turner Walker Walsh Ward Watson Webb Wells West White Wilson Wood Wright
Young Zhang Lin Wong Kaur Silva Novak Berg Costa""".split()
# Never used for real people: negative queries ask about these.
EN_FAKE_LAST = """Quillfeather Marrowby Thistlewick Ravensgard Oakenshade Winterbourne""".split()

ZH_SURNAMES = """王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 高 林 罗 郑 梁 谢 宋 唐 许 韩
冯 邓 曹 彭 曾 肖 田 董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 金""".split()
ZH_FEMALE = """芳 娜 敏 静 丽 艳 娟 霞 燕 玲 婷 雪 琳 欣 颖 慧 倩 洁 蕾 薇 晴 悦 瑶 岚 萍 菲 晓梅
雨桐 思琪 梦瑶 欣怡 佳怡 诗涵 雅婷 若曦 紫涵 语嫣 婉清 书瑶 可欣 一诺 梓萱 心怡 晨曦 嘉怡
馨予 静怡 秀英 桂兰 玉兰 凤英 海燕 春梅 丹丹 楠楠 月华 文静""".split()
ZH_MALE = """伟 强 磊 军 勇 杰 涛 斌 超 明 刚 平 辉 鹏 华 飞 鑫 波 宁 浩 凯 健 俊 帆 宇 博 建国
志强 子轩 浩然 宇航 俊杰 文博 天佑 明哲 思远 嘉伟 梓豪 振宇 晨阳 一鸣 皓轩 家豪 泽宇 立诚
国栋 海峰 永康 德华 建华 志明 少杰 宏伟 云龙 晓东 鸿飞 新民""".split()
# Never used for real people (not in ZH_SURNAMES): negative queries ask about these.
ZH_FAKE_SURNAMES = """欧阳 司马 诸葛 上官 慕容 东方""".split()

EN_CITIES = """Bristol Leeds York Bath Oxford Cambridge Brighton Norwich Exeter Chester Durham
Glasgow Edinburgh Cardiff Belfast Dublin Boston Denver Seattle Portland Austin Toronto
Melbourne Auckland""".split()
ZH_CITIES = """北京 上海 广州 深圳 杭州 南京 成都 重庆 武汉 西安 苏州 天津 长沙 郑州 青岛 厦门
昆明 大连 宁波 合肥 福州 济南 沈阳 哈尔滨""".split()
EN_STREETS = """Maple Harbour Kingsway Elm Willow Station Church Mill Park Bridge Orchard
Castle Victoria Albert Queen's Market Chapel Meadow Riverside Greenway Cedar Oak Ash Birch
Hawthorn Linden Rosewood Foxglove Heather Juniper Laurel Primrose Sycamore Thornbury
Westgate Eastgate Northfield Southbank Highfield Lowther""".split()
ZH_STREETS = """梧桐 银杏 香樟 桂花 玉兰 海棠 紫荆 芙蓉 丁香 枫林 松柏 翠竹 杏花 桃源 柳岸 荷塘
南湖 西湖 东湖 北山 青云 白云 朝阳 星光 明珠 长江 黄河 滨江 和平 解放 人民 建设 光明 幸福
文化 学府 科技 新华 中山 复兴""".split()

EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ZH_WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
EN_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
EN_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six")
ZH_NUMBERS = ("零", "一", "两", "三", "四", "五", "六")

# Chains: scripts of six steps, one topic each; {n} person, {x} the chain's slot value.
# relation: "causal" (each step because of the last) or "temporal" (a sequence in time).
SCRIPTS: dict[
    str, tuple[str, str, tuple[tuple[str, str], ...], tuple[str, ...], tuple[str, ...]]
] = {
    "trip": (
        "travel",
        "temporal",
        (
            ("{n} decided to plan a trip to {x}.", "{n}决定计划一次去{x}的旅行。"),
            (
                "{n} booked a sleeper carriage to {x} for the planned trip.",
                "{n}为了去{x}的旅行订了卧铺车厢。",
            ),
            (
                "{n} packed a rucksack the night before leaving for {x}.",
                "{n}在出发去{x}的前一晚收拾好了背包。",
            ),
            ("{n} arrived in {x} and checked into a guesthouse.", "{n}抵达{x}，住进了一家民宿。"),
            ("{n} toured the old town of {x} during the trip.", "{n}在旅行中游览了{x}的老城区。"),
            (
                "{n} came home from {x} and shared the trip photos.",
                "{n}从{x}回到家，分享了旅行照片。",
            ),
        ),
        tuple("Lisbon Kyoto Vienna Prague Seville Krakow Tallinn Porto".split()),
        tuple("丽江 大理 敦煌 桂林 凤凰 平遥 黄山 九寨沟".split()),
    ),
    "renovation": (
        "home",
        "causal",
        (
            ("{n} noticed a leak in the {x} ceiling.", "{n}发现{x}的天花板漏水了。"),
            (
                "Because of the leak, {n} called a builder to inspect the {x}.",
                "因为漏水，{n}请了装修师傅来检查{x}。",
            ),
            (
                "The builder told {n} the {x} needed new plasterwork.",
                "师傅告诉{n}，{x}需要重新刷墙抹灰。",
            ),
            ("{n} chose paint colours for the {x} renovation.", "{n}为{x}翻修挑选了油漆颜色。"),
            ("Workers finished replastering {n}'s {x}.", "工人完成了{n}家{x}的墙面翻新。"),
            ("{n} hosted friends to show off the renovated {x}.", "{n}请朋友来参观翻新后的{x}。"),
        ),
        ("kitchen", "bathroom", "attic", "hallway", "conservatory", "study"),
        ("厨房", "卫生间", "阁楼", "走廊", "阳光房", "书房"),
    ),
    "course": (
        "reading",
        "temporal",
        (
            ("{n} enrolled in an evening course on {x}.", "{n}报名参加了{x}夜校课程。"),
            (
                "{n} attended the first {x} lecture and met the tutor.",
                "{n}上了第一节{x}课，认识了老师。",
            ),
            ("{n} submitted the first {x} assignment.", "{n}交了第一份{x}作业。"),
            ("{n} struggled with the {x} mid-term test.", "{n}在{x}期中测验中考得很吃力。"),
            ("{n} passed the final {x} exam.", "{n}通过了{x}期末考试。"),
            (
                "{n} received a certificate for completing the {x} course.",
                "{n}拿到了{x}课程的结业证书。",
            ),
        ),
        ("Spanish", "astronomy", "pottery", "accounting", "Italian", "first aid"),
        ("西班牙语", "天文学", "陶艺", "会计", "意大利语", "急救"),
    ),
    "adoption": (
        "pets",
        "causal",
        (
            ("{n} decided to adopt a {x} from the shelter.", "{n}决定从救助站领养一只{x}。"),
            (
                "{n} filled in the shelter's forms to adopt the {x}.",
                "{n}为领养{x}填写了救助站的申请表。",
            ),
            ("{n} brought the {x} home for the first time.", "{n}第一次把{x}带回了家。"),
            ("The {x} fell ill, so {n} rushed it to the vet.", "{x}生病了，{n}连忙带它去看兽医。"),
            (
                "The vet gave {n}'s {x} medicine and it recovered.",
                "兽医给{n}的{x}开了药，它康复了。",
            ),
            ("{n} celebrated one month with the {x}.", "{n}庆祝和{x}相处满一个月。"),
        ),
        ("beagle", "tabby kitten", "greyhound", "rabbit", "terrier", "parrot"),
        ("比格犬", "狸花猫", "灵缇犬", "小兔子", "梗犬", "鹦鹉"),
    ),
    "band": (
        "music",
        "temporal",
        (
            ("{n} joined a band called {x}.", "{n}加入了一支叫{x}的乐队。"),
            ("{n} rehearsed with {x} for the first time.", "{n}第一次和{x}乐队一起排练。"),
            ("{n} wrote a new song for {x}.", "{n}为{x}乐队写了一首新歌。"),
            ("{x} recorded {n}'s song in a studio.", "{x}乐队在录音棚录了{n}写的歌。"),
            ("{n} played the first gig with {x}.", "{n}和{x}乐队完成了第一场演出。"),
            ("{n} left {x} after the summer tour.", "夏季巡演结束后，{n}离开了{x}乐队。"),
        ),
        (
            "The Night Owls",
            "Blue Static",
            "Copper Fields",
            "Paper Lanterns",
            "Echo Park",
            "Tin Roof",
        ),
        ("夜枭", "蓝色静电", "铜色田野", "纸灯笼", "回声公园", "铁皮屋顶"),
    ),
    "marathon": (
        "fitness",
        "causal",
        (
            ("{n} signed up for the {x} marathon.", "{n}报名参加了{x}马拉松。"),
            (
                "Because of the {x} marathon, {n} began a training plan.",
                "为了{x}马拉松，{n}开始执行训练计划。",
            ),
            (
                "{n} strained a calf during {x} marathon training.",
                "{n}在为{x}马拉松训练时拉伤了小腿。",
            ),
            (
                "{n} saw a physiotherapist about the {x} training injury.",
                "{n}因为{x}马拉松训练受伤去看了理疗师。",
            ),
            ("{n} ran the {x} marathon and finished it.", "{n}跑完了{x}马拉松全程。"),
            (
                "{n} donated the {x} marathon medal to a charity auction.",
                "{n}把{x}马拉松奖牌捐给了慈善拍卖。",
            ),
        ),
        ("Riverside", "Harbour", "Midsummer", "Autumn Leaves", "Old Town", "Coastal"),
        ("滨江", "海港", "仲夏", "秋叶", "古城", "海岸"),
    ),
    "garden": (
        "gardening",
        "causal",
        (
            ("{n} cleared a plot to grow {x}.", "{n}清理出一块地准备种{x}。"),
            (
                "{n} sowed seeds for the {x} in the cleared plot.",
                "{n}在清理好的地里播下了{x}种子。",
            ),
            (
                "Slugs attacked {n}'s {x}, so netting went up.",
                "蛞蝓啃了{n}种的{x}，于是搭起了防护网。",
            ),
            ("{n} watered the {x} daily through the dry spell.", "{n}在干旱期每天给{x}浇水。"),
            ("{n} harvested the first {x}.", "{n}收获了第一批{x}。"),
            (
                "{n} entered the best {x} in the village show and won.",
                "{n}拿最好的{x}参加乡村展评并获奖。",
            ),
        ),
        ("pumpkins", "courgettes", "strawberries", "runner beans", "sweetcorn", "leeks"),
        ("南瓜", "西葫芦", "草莓", "豇豆", "甜玉米", "韭葱"),
    ),
    "wedding": (
        "cooking",
        "temporal",
        (
            ("{n} agreed to cater {x}'s wedding.", "{n}答应为{x}的婚礼准备餐食。"),
            ("{n} planned the menu for {x}'s wedding.", "{n}为{x}的婚礼拟定了菜单。"),
            (
                "{n} tasted trial dishes with {x} before the wedding.",
                "婚礼前{n}和{x}一起试吃了菜品。",
            ),
            ("{n} cooked through the night before {x}'s wedding.", "{x}婚礼前夜，{n}通宵做菜。"),
            ("{n} served the feast at {x}'s wedding.", "{n}在{x}的婚礼上端上了宴席。"),
            ("{x} thanked {n} in a letter after the wedding.", "婚礼后{x}写信感谢了{n}。"),
        ),
        ("Marta", "Jonas", "Priya", "Elliot", "Rosa", "Kenji"),
        ("小敏", "阿杰", "丽丽", "大伟", "晓燕", "文轩"),
    ),
}
