"""Common English first names, for telling a person's first name from a
surname or a word where no recogniser runs (people.py): a sentence whose
gendered words may be a named person's is skipped by ``gender`` ("Patti made
soup ... my wonderful bride"), and a sentence that names someone besides its
listed name is skipped by ``names``.

The names are frequent US given names of the last century (their frequency
is a fact of the Social Security Administration's and the census's
published counts, not taken from any one list), with their common short
forms, plus a few stage names that stand for a first name in reviews.
Left out on purpose: names that are as often surnames or words ("Grant",
"Howard", "Lee", "Allen", "Carter", "Taylor", "Morgan", "Parker", "Ford",
"Martin", "Nelson", "Morris", "Dean", "Will", "Mark", "Jordan",
"Christian", "Austin", "Chase", "Hunter"), which would skip sentences about
a surname alone ("Grant ... him", which the gold set swaps).
"""
from __future__ import annotations

__all__ = ["FIRST_NAMES", "FIRST_NAME_GROUPS"]

_FEMALE = """
Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Nancy Lisa Betty Margaret Sandra Ashley
Kimberly Emily Donna Michelle Dorothy Carol Amanda Melissa Deborah Stephanie Rebecca Sharon Laura Cynthia Kathleen
Amy Shirley Angela Helen Anna Brenda Pamela Nicole Emma Samantha Katherine Christine Debra Rachel Catherine Carolyn
Janet Ruth Maria Heather Diane Virginia Julie Joyce Victoria Olivia Kelly Christina Lauren Joan Evelyn Judith Megan
Cheryl Andrea Hannah Martha Jacqueline Frances Gloria Ann Anne Annie Teresa Kathryn Sara Janice Jean Alice Madison
Doris Abigail Julia Judy Grace Denise Amber Marilyn Beverly Danielle Theresa Sophia Sophie Marie Diana Brittany
Natalie Isabella Charlotte Alexis Kayla Patti Patty Peggy Sally Wendy Tina Tracy Tracey Wanda Lucy Sue Susie Jane
Janie Kate Katie Kathy Cathy Carrie Connie Dana Ellen Eleanor Elaine Erin Gail Holly Irene Jill Joanne Josephine
Kim Lillian Lily Lois Lori Louise Lynn Marcia Marian Marion Maureen Meg Melanie Mildred Molly Monica Nora Norma
Paula Phyllis Rita Rosa Roberta Sylvia Tammy Tanya Valerie Vera Vicki Vivian Yvonne Zoe Zelda Esther Naomi Miriam
Leah Lydia Audrey Bonnie Claire Clara Edith Ella Ethel Florence Gwen Harriet Ida Jenny Jessie Joanna Juliet
Juliette Kristen Kristin Lena Lilia Liz Maggie Mandy Margo Marge Mia Mira Nina Olga Polly Priscilla Rachael Rebekah
Renee Rosie Sadie Sofia Stella Tess Trudy Uma Ursula Veronica Wilma Winona Gwyneth Kirsten Julianne Meryl Cate Halle
Reese Salma Frida Heidi Greta Ingrid Chloe Ava Amelia Scarlett Madeline Kylie Hillary Oprah Madonna Britney
Whitney Beyonce Rihanna Cher Shakira Adele Ashanti Jodie Glenn Goldie Bette Barbra Liza Judi Maggie Kathleen Keira
Nicola Natasha Svetlana Isabelle Isabel Elena Adriana Gabriela Carmen Lucia Luisa Francesca Giulia Chiara Monique
Brigitte Catherine Delphine Juliette Audrey Charlize Penelope Angelina Jennifer Drew Cameron Demi Sigourney Jodie
Geena Diane Susan Helena Holly Kirsten Winona Thora Scarlett Emmy Lindsay Lindsey Hilary Hayley Jenna Kelsey
Courtney Crystal Tiffany Vanessa Sabrina Brooke Paige Alyssa Mackenzie Haley Jasmine Destiny Brianna Kaitlyn
""".split()

_MALE = """
James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony Donald
Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan Jacob Gary Nicholas
Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank Patrick Raymond Jack
Dennis Jerry Aaron Jose Adam Nathan Henry Peter Kyle Ethan Walter Noah Jeremy Keith Roger Terry Gerald Harold Sean
Carl Arthur Lawrence Dylan Jesse Bryan Billy Joe Bruce Gabriel Albert Willie Alan Juan Randy Roy Vincent Ralph
Eugene Bobby Philip Phillip Louis Tim Tom Tommy Jim Jimmy Mike Dave Danny Dan Chris Steve Bob Bill Ben Benny Sam
Sammy Joey Johnny Jon Nick Ed Eddie Eddy Ted Teddy Fred Freddie Frankie Harry Hank Jake Jeff Ken Kenny Leo Leon Lou
Luke Marty Max Mel Mitch Ned Nate Neil Oscar Otto Pete Phil Ray Rick Ricky Rob Robbie Rod Ron Ronnie Rudy Sid Stan
Stu Tony Vic Vince Walt Wes Woody Zack Clint Kirk Kurt Keanu Hugh Ian Colin Liam Owen Evan Seth Adrian Dustin
Travis Shane Todd Troy Brad Chad Derek Greg Joel Josh Lance Marcus Nathaniel Oliver Roman Sebastian Simon Spike
Stanley Tobey Vladimir Werner Wolfgang Yuri Arnold Alfred Bernard Boris Carlos Cary Cecil Clarence Claude Clifford
Curtis Dale Darren Dwight Earl Edgar Elmer Elvis Ernest Felix Floyd Francis Franklin Gene Gilbert Gordon Herbert
Herman Homer Hugo Ivan Jacques Jerome Kent Lloyd Lyle Marvin Maurice Milton Norman Orson Percy Quentin Randall
Reginald Rex Rodney Roland Rufus Rupert Sylvester Theodore Vernon Victor Wallace Warren Wilbur Willard Rowan Tobias
Jude Ewan Harvey Jackie Eddie Mickey Woody Ashton Keenan Elton Orlando Leonardo Robin Kiefer Kevin Denzel Samuel
Dustin Matthew Leonard Ernest Steven Ridley Roberto Pedro Pablo Diego Alejandro Antonio Giovanni Giuseppe Marco Luca
Francesco Federico Pierre Jean Luc Michel Francois Gerard Alain Jacques Hans Klaus Dieter Jurgen Lars Sven Olaf
Dmitri Sergei Nikolai Mikhail Alexei Igor Akira Hiroshi Takeshi Kenji Jackie Jet Chow Ang Zhang Yimou Wong Kar
Bernardo Sergio Vittorio Federico Ingmar Krzysztof Roman Werner Lasse Wim Volker Tom Hugh Colin Jude Ralph Liam
Dennis Gene Burt Bing Cary Clark Errol Humphrey Kirk Rock Rip Sidney Spencer Yul Marlon Montgomery Sean Dustin Al
Matt Matty Andy Alex Charlie Jamie Freddy Timmy Danny Jeremy Brett Bret Gus Hal Ike Abe Moe Ozzie Ollie Archie Barney
""".split()

_NOT_NAMES = frozenset("""Chow Ang Zhang Yimou Wong Kar Jet Drew Cameron Glenn Spencer Montgomery Clark Rock Rip Al
Jean Luc Grace Robin""".split())
#: capitalised first names (female and male together: a skip needs the name, not its gender)
FIRST_NAMES = frozenset(_FEMALE + _MALE) - _NOT_NAMES
#: the names given to one gender only: the group an unlisted name's pronouns must be of
#: ("Frida": a first name, but in reviews a film more often than a person: not swapped as a name)
FIRST_NAME_GROUPS = {**{n: "female" for n in set(_FEMALE) - set(_MALE) - _NOT_NAMES - {"Frida"}},
                     **{n: "male" for n in set(_MALE) - set(_FEMALE) - _NOT_NAMES}}
