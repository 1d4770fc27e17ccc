-- labctl's protocol for an external runtime, by hand (only the packages that ship with GHC are
-- at hand, so no aeson): the request parsed from JSON, the reply printed as one JSON line.
module Protocol
  ( Value (..)
  , Reply (..)
  , parseJson
  , renderReply
  , badInput
  , wrongAnswer
  ) where

import Data.Char (chr, isDigit, isHexDigit, isSpace, ord)
import Data.List (intercalate)
import Numeric (readHex, showHex)
import System.Exit (ExitCode (..), exitWith)
import System.IO (hPutStrLn, stderr)

-- A JSON value; a number keeps its text, so an integer is read exactly and a fraction refused.
data Value
  = Object [(String, Value)]
  | Array [Value]
  | Str String
  | Number String
  | Boolean Bool
  | Null

-- What the program prints: {"elapsed_ns", "messages", "answer", "metrics"}.
data Reply = Reply
  { elapsedNs :: Int
  , messages :: Int
  , answer :: String
  , metrics :: [(String, Double)] -- a figure not measured is left out, never 0
  , agentsCreated :: Maybe Int -- the agents (threads) its phase made, where it counts them
  }

-- Bad input: a one-line message on stderr, nothing on stdout, exit 2.
badInput :: String -> IO a
badInput message = do
  hPutStrLn stderr ("labctl-ghc-peer: " ++ message)
  exitWith (ExitFailure 2)

-- A wrong answer is no timing: a one-line message on stderr, nothing on stdout, exit 1.
wrongAnswer :: String -> String -> String -> IO a
wrongAnswer kernel got expected = do
  hPutStrLn stderr ("labctl-ghc-peer: " ++ kernel ++ ": wrong answer: got '" ++ got
                    ++ "', expected '" ++ expected ++ "'")
  exitWith (ExitFailure 1)

-- The whole input as one JSON value, nothing but white space after it.
parseJson :: String -> Either String Value
parseJson input = do
  (v, rest) <- value (dropWhile isSpace input)
  if all isSpace rest then Right v else Left "trailing data after the JSON value"

type Parser a = String -> Either String (a, String)

value :: Parser Value
value s = case s of
  '{' : rest -> object (dropWhile isSpace rest) []
  '[' : rest -> array (dropWhile isSpace rest) []
  '"' : rest -> do
    (text, after) <- string rest
    Right (Str text, after)
  't' : 'r' : 'u' : 'e' : rest -> Right (Boolean True, rest)
  'f' : 'a' : 'l' : 's' : 'e' : rest -> Right (Boolean False, rest)
  'n' : 'u' : 'l' : 'l' : rest -> Right (Null, rest)
  c : _ | c == '-' || isDigit c -> number s
  [] -> Left "unexpected end of input"
  c : _ -> Left ("unexpected character " ++ show c)

-- After '{': members until '}'. A key given twice is refused (which one would count?).
object :: String -> [(String, Value)] -> Either String (Value, String)
object ('}' : rest) [] = Right (Object [], rest)
object ('"' : s) members = do
  (key, afterKey) <- string s
  if key `elem` map fst members then Left ("key " ++ show key ++ " given twice") else Right ()
  afterColon <- case dropWhile isSpace afterKey of
    ':' : r -> Right (dropWhile isSpace r)
    _ -> Left ("':' expected after key " ++ show key)
  (v, afterValue) <- value afterColon
  let members' = (key, v) : members
  case dropWhile isSpace afterValue of
    ',' : r -> object (dropWhile isSpace r) members'
    '}' : r -> Right (Object (reverse members'), r)
    _ -> Left "',' or '}' expected in an object"
object _ _ = Left "a string key expected in an object"

-- After '[': elements until ']'.
array :: String -> [Value] -> Either String (Value, String)
array (']' : rest) [] = Right (Array [], rest)
array s elements = do
  (v, afterValue) <- value s
  case dropWhile isSpace afterValue of
    ',' : r -> array (dropWhile isSpace r) (v : elements)
    ']' : r -> Right (Array (reverse (v : elements)), r)
    _ -> Left "',' or ']' expected in an array"

-- After '"': the characters until the closing '"', escapes decoded.
string :: Parser String
string = go []
  where
    go acc s = case s of
      '"' : rest -> Right (reverse acc, rest)
      '\\' : e : rest -> case e of
        'u' -> do
          (code, after) <- hex4 rest
          case after of
            -- A surrogate pair: one character outside the basic plane.
            '\\' : 'u' : low | code >= 0xD800 && code < 0xDC00 -> do
              (code2, after2) <- hex4 low
              if code2 >= 0xDC00 && code2 < 0xE000
                then go (chr (0x10000 + (code - 0xD800) * 0x400 + (code2 - 0xDC00)) : acc) after2
                else Left "a lone surrogate in a string"
            _ -> go (chr code : acc) after
        _ -> case lookup e escapes of
          Just c -> go (c : acc) rest
          Nothing -> Left ("bad escape \\" ++ [e] ++ " in a string")
      c : rest
        | ord c < 0x20 -> Left "a control character in a string"
        | otherwise -> go (c : acc) rest
      [] -> Left "unterminated string"
    escapes = [('"', '"'), ('\\', '\\'), ('/', '/'), ('b', '\b'), ('f', '\f'), ('n', '\n'),
               ('r', '\r'), ('t', '\t')]
    hex4 s = case splitAt 4 s of
      (digits, rest) | length digits == 4 && all isHexDigit digits -> case readHex digits of
        [(code, "")] -> Right (code, rest)
        _ -> Left "bad \\u escape"
      _ -> Left "bad \\u escape"

-- A number as JSON writes it: -?int(.frac)?([eE][+-]?digits)?, kept as text.
number :: Parser Value
number s =
  let (sign, afterSign) = span (== '-') s
      (whole, afterWhole) = span isDigit afterSign
      (fraction, afterFraction) = case afterWhole of
        '.' : r -> let (ds, r') = span isDigit r in ('.' : ds, r')
        _ -> ("", afterWhole)
      (expo, rest) = case afterFraction of
        e : r | e `elem` "eE" ->
          let (pm, r') = span (`elem` "+-") r
              (ds, r'') = span isDigit r'
           in (e : pm ++ ds, r'')
        _ -> ("", afterFraction)
      valid = length sign <= 1 && not (null whole) && (whole == "0" || head whole /= '0')
              && fraction /= "." && (null expo || any isDigit expo) && length (filter (`elem` "+-") expo) <= 1
   in if valid then Right (Number (sign ++ whole ++ fraction ++ expo), rest) else Left "bad number"

-- The reply as one JSON line.
-- The reply, with the resident set (KiB) the program had before the kernel's set-up: beside the
-- agents made, labctl's memory per agent.
renderReply :: Reply -> Int -> String
renderReply r rssBeforeKb =
  "{\"elapsed_ns\":" ++ show (elapsedNs r) ++ ",\"messages\":" ++ show (messages r)
    ++ ",\"rss_before_kb\":" ++ show rssBeforeKb
    ++ maybe "" (\n -> ",\"agents_created\":" ++ show n) (agentsCreated r)
    ++ ",\"answer\":" ++ quote (answer r) ++ ",\"metrics\":{"
    ++ intercalate "," [quote name ++ ":" ++ finite v | (name, v) <- metrics r] ++ "}}"
  where
    -- Haskell's show of a finite Double (1.5, 2.0e-3) is a JSON number; anything else is not
    -- a measured figure.
    finite v
      | isNaN v || isInfinite v = "null"
      | otherwise = show v

quote :: String -> String
quote text = '"' : concatMap escape text ++ "\""
  where
    escape '"' = "\\\""
    escape '\\' = "\\\\"
    escape c
      | ord c < 0x20 = "\\u" ++ replicate (4 - length h) '0' ++ h
      | otherwise = [c]
      where
        h = showHex (ord c) ""
